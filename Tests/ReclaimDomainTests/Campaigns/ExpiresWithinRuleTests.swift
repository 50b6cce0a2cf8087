import Foundation
import ReclaimTestSupport
import Testing

@testable import ReclaimDomain

/// Issue 75: `conditions.expiresWithin` bounds a running subscription's trigger in time. A trigger whose period ends
/// further away is deferred to that long before the end and re-checked then, not skipped; a commitment's end counts.
@Suite("expiresWithin: a running subscription's trigger decided when its end comes near", .poolWatchdog)
struct ExpiresWithinRuleTests: CampaignFactories {
    static let within: Int64 = 14 * 86_400

    func retain() -> NotificationCampaign {
        campaign(
            "retain",
            trigger: CampaignTrigger(type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED"),
            conditions: CampaignConditions(expiresWithin: Self.within)
        )
    }

    func running(endsIn days: Double) -> SubscriptionState {
        var state = state()
        state.status = .active
        state.expirationIntent = nil
        state.expiresAt = Fixture.days(days)
        return state
    }

    func cancelled() -> SubscriptionEvent { event("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED") }

    @Test("ends in 5 days: met; in 330: not met, saying when; a lapsed subscription: not active; the grace period's end counts")
    func condition() throws {
        Expected.offered().check(try decide(retain(), state: running(endsIn: 5), event: cancelled(), now: Fixture.t0))
        let far = try decide(retain(), state: running(endsIn: 330), event: cancelled(), now: Fixture.t0)
        Expected.skipped("expiresWithin: the period ends").check(far)
        #expect(far.reason.contains("more than 2w away"), "\(far.reason)")
        Expected.skipped("expiresWithin: the subscription is expired").check(
            try decide(retain(), state: state(), event: cancelled(), now: Fixture.t0)
        )
        var grace = running(endsIn: -1)
        grace.status = .gracePeriod
        grace.gracePeriodExpiresAt = Fixture.days(6)
        #expect(grace.periodEnd(after: Fixture.t0) == Fixture.days(6))
        Expected.offered().check(try decide(retain(), state: grace, event: cancelled(), now: Fixture.t0))
    }

    @Test("a far end is deferred to 14 days before it, not skipped; a near one decided now; other campaigns untouched")
    func deferred() {
        let winback = campaign()
        let (now, later) = CampaignEvaluator.expiryDeferrals(
            campaigns: [retain(), winback],
            state: running(endsIn: 330),
            event: cancelled(),
            now: Fixture.t0
        )
        #expect(now.map(\.id) == ["winback"])
        #expect(later.map(\.campaign.id) == ["retain"])
        #expect(later.first?.fireAt == Fixture.days(316) && later.first?.periodEndsAt == Fixture.days(330))
        let near = CampaignEvaluator.expiryDeferrals(campaigns: [retain()], state: running(endsIn: 5), event: cancelled(), now: Fixture.t0)
        #expect(near.now.map(\.id) == ["retain"] && near.deferred.isEmpty)
    }

    @Test("a commitment that will not renew: its end counts, not the month's")
    func commitmentEnd() {
        var state = running(endsIn: 20)
        state.commitmentExpiresAt = Fixture.days(200)
        state.commitmentAutoRenew = false
        #expect(state.periodEnd(after: Fixture.t0) == Fixture.days(200))
        let (_, later) = CampaignEvaluator.expiryDeferrals(campaigns: [retain()], state: state, event: cancelled(), now: Fixture.t0)
        #expect(later.first?.fireAt == Fixture.days(186))
    }

    @Test("when the deferred fire comes: offered if still running and near; skipped if lapsed, or if its end moved away")
    func fire() {
        let fireAt = Fixture.days(316)
        let end = Fixture.days(330)
        func fire(_ state: SubscriptionState) -> CampaignDecision {
            CampaignEvaluator.fire(retain(), state: state, history: OfferHistory(), triggeredAt: Fixture.t0, periodEndsAt: end, now: fireAt)
        }
        Expected.offered().check(fire(running(endsIn: 330)))
        Expected.skipped("lapsed").check(fire(state()))
        Expected.skipped("expiresWithin").check(fire(running(endsIn: 360)))
    }
}
