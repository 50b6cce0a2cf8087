import Foundation
import ReclaimDomain
import ReclaimTestSupport
import Testing

/// Delayed campaigns: scheduled at the trigger, decided when they fire, on the state of that moment.
@Suite(.poolWatchdog) struct DelayedCampaignRuleTests: CampaignFactories {
    func delayed(days: Double, window: Double? = nil, holdoutPercent: Int = 0) -> NotificationCampaign {
        var campaign = campaign("winback-later", holdoutPercent: holdoutPercent)
        campaign.delay = days * Fixture.day
        campaign.window = (window ?? days + 1) * Fixture.day
        return campaign
    }

    @Test func aDelayedCampaignDecidesNothingAtTheTriggerAndIsScheduledForTriggerPlusDelay() {
        let later = delayed(days: 7)
        let now = campaign("winback-now")
        let decisions = CampaignEvaluator.evaluate(campaigns: [later, now], state: state(), event: event(), history: OfferHistory(), now: Fixture.t0)
        #expect(decisions.map(\.campaign.id) == ["winback-now"])
        let scheduled = CampaignEvaluator.schedule(campaigns: [later, now], state: state(lastSignedDate: Fixture.days(-2)), event: event())
        #expect(scheduled.map(\.campaign.id) == ["winback-later"] && scheduled.map(\.fireAt) == [Fixture.days(7)])
        // A late notification (the state already holds a newer one) schedules nothing, as it decides nothing.
        #expect(CampaignEvaluator.schedule(campaigns: [later], state: state(lastSignedDate: Fixture.days(1)), event: event()).isEmpty)
        // Outside the campaign's dates: nothing.
        var ended = later
        ended.endsAt = Fixture.days(-1)
        #expect(CampaignEvaluator.schedule(campaigns: [ended], state: state(lastSignedDate: nil), event: event()).isEmpty)
    }

    @Test func firingOffersOnTheStateOfThatMomentDeliverableFromThen() throws {
        let decision = CampaignEvaluator.fire(
            delayed(days: 7),
            state: state(),
            history: OfferHistory(),
            triggeredAt: Fixture.t0,
            now: Fixture.days(7)
        )
        #expect(decision.outcome == .offered, "\(decision.reason)")
        #expect(decision.deliverableUntil == Fixture.days(14), "deliverableFor (7 d) counts from the fire")
    }

    @Test func aSubscriberWhoCameBackIsSkipped() {
        var back = state(lastSignedDate: Fixture.days(3))
        back.status = .active
        back.lastNotificationType = "SUBSCRIBED"
        let decision = CampaignEvaluator.fire(delayed(days: 7), state: back, history: OfferHistory(), triggeredAt: Fixture.t0, now: Fixture.days(7))
        #expect(decision.outcome == .skipped && decision.reason.hasPrefix("came back"), "\(decision.reason)")
    }

    @Test func aFirePastItsWindowIsSkipped() {
        let decision = CampaignEvaluator.fire(
            delayed(days: 7, window: 10),
            state: state(),
            history: OfferHistory(),
            triggeredAt: Fixture.t0,
            now: Fixture.days(11)
        )
        #expect(decision.outcome == .skipped && decision.reason.hasPrefix("window passed"), "\(decision.reason)")
    }

    @Test func everyOtherRuleStillApplies() {
        // A live offer of higher priority, given meanwhile, wins; the holdout holds out.
        let withLive = OfferHistory(liveOffer: liveOffer(priority: 100))
        let blocked = CampaignEvaluator.fire(delayed(days: 7), state: state(), history: withLive, triggeredAt: Fixture.t0, now: Fixture.days(7))
        #expect(blocked.outcome == .skipped && blocked.reason.hasPrefix("one offer at a time"), "\(blocked.reason)")
        let held = CampaignEvaluator.fire(
            delayed(days: 7, holdoutPercent: 100),
            state: state(),
            history: OfferHistory(),
            triggeredAt: Fixture.t0,
            now: Fixture.days(7)
        )
        #expect(held.outcome == .heldOut)
    }
}
