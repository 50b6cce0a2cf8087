import Foundation
import ReclaimDomain
import ReclaimTestSupport
import Testing

/// One live offer per subscriber: priorities between a live offer and a new campaign, and between campaigns
/// one notification triggers.
@Suite(.poolWatchdog) struct CampaignPriorityTests: CampaignFactories {
    @Test(arguments: [
        // (live offer's priority, campaign's priority)
        (0, 1),
        (4, 5),
        (-3, 0),
    ])
    func aLiveOfferOfLowerPriorityIsSuperseded(live livePriority: Int, campaign priority: Int) throws {
        let live = liveOffer(campaignId: "retention", priority: livePriority)
        let decision = try decide(campaign("winback", priority: priority), history: OfferHistory(liveOffer: live))
        Expected.offered("supersedes").check(decision, "live \(livePriority) < \(priority)")
        #expect(decision.supersedes == live.id)
        #expect(decision.reason.contains(live.id.uuidString.lowercased()))
    }

    @Test(arguments: [
        // (live offer's priority, campaign's priority)
        (5, 5),
        (0, 0),
        (6, 5),
        (100, -1),
    ])
    func aLiveOfferOfEqualOrHigherPriorityWins(live livePriority: Int, campaign priority: Int) throws {
        let live = liveOffer(campaignId: "retention", priority: livePriority)
        let decision = try decide(campaign("winback", priority: priority), history: OfferHistory(liveOffer: live))
        Expected.skipped("one offer at a time").check(decision, "live \(livePriority) ≥ \(priority)")
        #expect(decision.supersedes == nil)
    }

    @Test func withNoLiveOfferNothingIsSuperseded() throws {
        let decision = try decide(campaign(priority: 3))
        Expected.offered().check(decision)
        #expect(decision.supersedes == nil)
    }

    @Test func onlyTheHigherPriorityCampaignOffersForOneEvent() {
        // Ids in the opposite order of priorities, campaigns passed lowest first: priority decides.
        let high = campaign("b-high", priority: 10)
        let low = campaign("a-low", priority: 1)
        let decisions = evaluate([low, high])
        #expect(decisions.map(\.campaign.id) == ["b-high", "a-low"])
        guard decisions.count == 2 else { return }
        Expected.offered().check(decisions[0], "high")
        Expected.skipped("superseded").check(decisions[1], "low")
        #expect(decisions[1].reason.contains("b-high"))
        #expect(decisions[1].supersedes == nil)
    }

    @Test func equalPrioritiesAreDecidedById() {
        let decisions = evaluate([campaign("beta", priority: 2), campaign("alpha", priority: 2)])
        #expect(decisions.map(\.campaign.id) == ["alpha", "beta"])
        guard decisions.count == 2 else { return }
        Expected.offered().check(decisions[0], "alpha")
        Expected.skipped("superseded").check(decisions[1], "beta")
    }

    @Test func manyCampaignsOnlyTheFirstEligibleOffers() {
        let decisions = evaluate([campaign("p1", priority: 1), campaign("p3", priority: 3), campaign("p2", priority: 2)])
        #expect(decisions.map(\.outcome) == [.offered, .skipped, .skipped])
        #expect(decisions.dropFirst().allSatisfy { $0.reason.contains("superseded") && $0.reason.contains("p3") })
    }

    @Test func aSkippedHigherCampaignDoesNotBlockTheLowerOne() {
        let high = campaign("high", conditions: CampaignConditions(storefronts: ["FRA"]), priority: 10)
        let low = campaign("low", priority: 1)
        let decisions = evaluate([high, low])
        #expect(decisions.map(\.campaign.id) == ["high", "low"])
        guard decisions.count == 2 else { return }
        Expected.skipped("storefront").check(decisions[0], "high")
        Expected.offered().check(decisions[1], "low")
    }

    @Test func aHeldOutHigherPriorityCampaignMakesALowerOneSkip() {
        let high = campaign("high", holdoutPercent: 100, priority: 10)
        let low = campaign("low", priority: 1)
        let decisions = evaluate([low, high])
        #expect(decisions.map(\.campaign.id) == ["high", "low"])
        guard decisions.count == 2 else { return }
        Expected.heldOut().check(decisions[0], "high")
        Expected.skipped("superseded").check(decisions[1], "low")
        #expect(decisions[1].reason.contains("held out of"))
        #expect(decisions[1].reason.contains("high"))
    }

    @Test func theHigherCampaignSupersedesALowerLiveOfferAndTheLowerCampaignSkips() {
        let live = liveOffer(campaignId: "old", priority: 0)
        let decisions = evaluate([campaign("low", priority: 1), campaign("high", priority: 5)], history: OfferHistory(liveOffer: live))
        #expect(decisions.map(\.campaign.id) == ["high", "low"])
        guard decisions.count == 2 else { return }
        Expected.offered("supersedes").check(decisions[0], "high")
        #expect(decisions[0].supersedes == live.id)
        Expected.skipped("superseded").check(decisions[1], "low")
        #expect(decisions[1].supersedes == nil)
    }

    @Test func aLiveOfferBetweenTwoPrioritiesBlocksTheLowerCampaign() {
        // The higher campaign would supersede it but its condition fails; the lower one cannot.
        let live = liveOffer(campaignId: "old", priority: 3)
        let high = campaign("high", conditions: CampaignConditions(products: [Fixture.yearly]), priority: 5)
        let low = campaign("low", priority: 1)
        let decisions = evaluate([high, low], history: OfferHistory(liveOffer: live))
        guard decisions.count == 2 else {
            Issue.record("expected two decisions, got \(decisions.count)")
            return
        }
        Expected.skipped("product").check(decisions[0], "high")
        Expected.skipped("one offer at a time").check(decisions[1], "low")
    }
}
