import Foundation
import ReclaimDomain
import ReclaimTestSupport
import Testing

/// The rules that do not need a history: order of evaluation, stale events, date windows, the subscription
/// requirement, Apple's win-back offers and the delivery window.
@Suite(.poolWatchdog) struct CampaignEvaluatorTests: CampaignFactories {
    @Test func anEligibleSubscriberIsOfferedWithTheDeliveryWindow() throws {
        let decision = try decide(campaign(deliverableFor: 3 * Fixture.day))
        Expected.offered("eligible").check(decision)
        #expect(decision.reason.contains("EXPIRED"))
        #expect(decision.supersedes == nil)
        #expect(decision.deliverableUntil == Fixture.days(3))
        #expect(decision.campaign.id == "winback")
    }

    // MARK: Stale events

    @Test(
        arguments: [
            // (seconds the state's last notification is newer than the event, expected)
            (1.0, Expected.skipped("stale")),
            (86_400.0, Expected.skipped("stale")),
            (0.001, Expected.skipped("stale")),
            // The state normally holds the event itself (applied just before): same signedDate is not stale.
            (0.0, Expected.offered()),
            (-60.0, Expected.offered()),
        ] as [(Double, Expected)]
    )
    func anEventOlderThanTheStateIsStale(newerBy seconds: Double, expected: Expected) throws {
        let decision = try decide(campaign(), state: state(lastSignedDate: Fixture.seconds(seconds)), event: event(at: Fixture.t0))
        expected.check(decision, "state newer by \(seconds)s")
    }

    @Test func aStaleEventTriggersNoCampaignAtAll() {
        let decisions = evaluate(
            [campaign("a", priority: 2), campaign("b", priority: 1)],
            state: state(lastSignedDate: Fixture.days(1)),
            event: event(at: Fixture.t0)
        )
        #expect(decisions.count == 2)
        for decision in decisions { Expected.skipped("stale").check(decision, "\(decision.campaign.id)") }
    }

    // MARK: Date windows

    struct WindowCase: Sendable, CustomStringConvertible {
        var name: String
        /// Seconds from the event's signedDate (t0).
        var startsAt: Double?
        var endsAt: Double?
        var expected: Expected
        var description: String { name }
    }

    @Test(arguments: [
        WindowCase(name: "no window", startsAt: nil, endsAt: nil, expected: .offered()),
        WindowCase(name: "starts exactly at the event", startsAt: 0, endsAt: nil, expected: .offered()),
        WindowCase(name: "starts a second after the event", startsAt: 1, endsAt: nil, expected: .skipped("not started")),
        // now is an hour after the event: the window is measured at signedDate, not now.
        WindowCase(name: "starts between the event and now", startsAt: 1800, endsAt: nil, expected: .skipped("not started")),
        WindowCase(name: "started a day before", startsAt: -86_400, endsAt: nil, expected: .offered()),
        WindowCase(name: "ends exactly at the event (exclusive)", startsAt: nil, endsAt: 0, expected: .skipped("ended")),
        WindowCase(name: "ended a day before", startsAt: nil, endsAt: -86_400, expected: .skipped("ended")),
        WindowCase(name: "ends a second after the event", startsAt: nil, endsAt: 1, expected: .offered()),
        WindowCase(name: "ends between the event and now", startsAt: nil, endsAt: 1800, expected: .offered()),
        WindowCase(name: "inside a two-day window", startsAt: -86_400, endsAt: 86_400, expected: .offered()),
        WindowCase(name: "before a future window", startsAt: 86_400, endsAt: 2 * 86_400, expected: .skipped("not started")),
    ])
    func dateWindowIsMeasuredAtTheEventsSignedDate(_ window: WindowCase) throws {
        let windowed = campaign(startsAt: window.startsAt.map(Fixture.seconds), endsAt: window.endsAt.map(Fixture.seconds))
        let decision = try decide(windowed, event: event(at: Fixture.t0), now: Fixture.seconds(3600))
        window.expected.check(decision, "\(window.name)")
    }

    // MARK: Subscription requirement

    @Test func aSubscriberWithNoTransactionEverAppliedIsSkipped() throws {
        let fresh = SubscriptionState(
            bundleId: Fixture.bundleId,
            environment: Fixture.environment,
            originalTransactionId: Fixture.originalTransactionId
        )
        #expect(!fresh.hasOrHadSubscription)
        Expected.skipped("no subscription").check(try decide(campaign(), state: fresh))
    }

    @Test func aNotificationWithoutTransactionOrRenewalInfoDoesNotMakeASubscriber() throws {
        var subscription = SubscriptionState(
            bundleId: Fixture.bundleId,
            environment: Fixture.environment,
            originalTransactionId: Fixture.originalTransactionId
        )
        let snapshot = SubscriptionSnapshot(
            bundleId: Fixture.bundleId,
            environment: Fixture.environment,
            originalTransactionId: Fixture.originalTransactionId,
            notificationType: "EXPIRED",
            subtype: "VOLUNTARY",
            signedDate: Fixture.t0,
            notificationUUID: UUID()
        )
        let applied = subscription.apply(snapshot)
        #expect(applied)
        #expect(!subscription.hasOrHadSubscription)
        Expected.skipped("no subscription").check(try decide(campaign(), state: subscription, event: SubscriptionEvent(snapshot)))
    }

    @Test func aSubscriberKnownFromATransactionIsNotSkippedForIt() throws {
        var subscription = SubscriptionState(
            bundleId: Fixture.bundleId,
            environment: Fixture.environment,
            originalTransactionId: Fixture.originalTransactionId
        )
        let snapshot = SubscriptionSnapshot(
            bundleId: Fixture.bundleId,
            environment: Fixture.environment,
            originalTransactionId: Fixture.originalTransactionId,
            notificationType: "EXPIRED",
            subtype: "VOLUNTARY",
            signedDate: Fixture.t0,
            notificationUUID: UUID(),
            appleStatus: 2,
            transaction: TransactionInfo(
                originalTransactionId: Fixture.originalTransactionId,
                transactionId: "2000000000000042",
                productId: Fixture.monthly
            )
        )
        let applied = subscription.apply(snapshot)
        #expect(applied)
        #expect(subscription.hasOrHadSubscription)
        Expected.offered().check(try decide(campaign(), state: subscription, event: SubscriptionEvent(snapshot)))
    }

    // MARK: Apple's win-back offers

    @Test(
        arguments: [
            ([], true, Expected.offered()),
            ([], false, Expected.offered()),
            (["wb1"], true, Expected.skipped("standing aside")),
            (["wb1", "wb2"], true, Expected.skipped("standing aside")),
            (["wb1"], false, Expected.offered()),
            (["wb1", "wb2"], false, Expected.offered()),
        ] as [([String], Bool, Expected)]
    )
    func standsAsideForApplesWinBackOffers(eligible: [String], standAside: Bool, expected: Expected) throws {
        let decision = try decide(campaign(standAsideForWinBack: standAside), state: state(eligibleWinBackOfferIds: eligible))
        expected.check(decision, "eligible \(eligible), standAside \(standAside)")
        if expected.outcome == .skipped {
            for id in eligible { #expect(decision.reason.contains(id)) }
        }
    }

    // MARK: Delivery window

    @Test(
        arguments: [
            // (seconds after the event that the worker evaluates it, expected) with deliverableFor 7 days
            (0.0, Expected.offered()),
            (3600.0, Expected.offered()),
            (7 * 86_400.0 - 1, Expected.offered()),
            (7 * 86_400.0, Expected.skipped("too late")),
            (7 * 86_400.0 + 1, Expected.skipped("too late")),
            (30 * 86_400.0, Expected.skipped("too late")),
        ] as [(Double, Expected)]
    )
    func anOfferNoLongerDeliverableIsTooLate(evaluatedAfter seconds: Double, expected: Expected) throws {
        let decision = try decide(campaign(deliverableFor: 7 * Fixture.day), event: event(at: Fixture.t0), now: Fixture.seconds(seconds))
        expected.check(decision, "evaluated \(seconds)s after")
        #expect(decision.deliverableUntil == Fixture.days(7))
    }

    // MARK: Which campaigns decide

    @Test func decisionsComeHighestPriorityFirstThenById() {
        // Every one is skipped (stale), so all are decided and the order is visible.
        let campaigns = [
            campaign("c", priority: 1), campaign("b", priority: 5), campaign("a", priority: 1), campaign("z", priority: 9),
        ]
        let decisions = evaluate(campaigns, state: state(lastSignedDate: Fixture.days(1)))
        #expect(decisions.map(\.campaign.id) == ["z", "b", "a", "c"])
    }

    @Test func campaignsOfAnotherAppNeverFire() {
        let own = campaign("own", priority: 1)
        let foreign = campaign("foreign", bundleId: Fixture.otherBundleId, priority: 9)
        #expect(evaluate([foreign]).isEmpty)
        let decisions = evaluate([foreign, own])
        #expect(decisions.map(\.campaign.id) == ["own"])
        Expected.offered().check(decisions[0])
        // Nor does the subscriber of the other app get the fixture app's campaign.
        #expect(evaluate([own], state: state(bundleId: Fixture.otherBundleId)).isEmpty)
    }

    @Test func anEventThatTriggersNothingDecidesNothing() {
        #expect(evaluate([campaign(trigger: CampaignTrigger(type: "EXPIRED", subtype: "BILLING_RETRY"))]).isEmpty)
        #expect(evaluate([campaign()], event: event("DID_RENEW", nil)).isEmpty)
        #expect(evaluate([]).isEmpty)
    }

    /// The rules apply in the documented order: the first that says no gives the reason.
    @Test func theFirstRuleThatSaysNoGivesTheReason() throws {
        let everythingWrong = campaign(
            conditions: CampaignConditions(products: [Fixture.yearly]),
            deliverableFor: 60,
            startsAt: Fixture.days(1)
        )
        let staleState = state(eligibleWinBackOfferIds: ["wb1"], lastSignedDate: Fixture.days(2))
        Expected.skipped("stale").check(try decide(everythingWrong, state: staleState))
        Expected.skipped("not started").check(try decide(everythingWrong, state: state(eligibleWinBackOfferIds: ["wb1"])))
        var started = everythingWrong
        started.startsAt = nil
        Expected.skipped("condition not met").check(try decide(started, state: state(eligibleWinBackOfferIds: ["wb1"])))
        started.conditions = CampaignConditions()
        Expected.skipped("standing aside").check(try decide(started, state: state(eligibleWinBackOfferIds: ["wb1"])))
        Expected.skipped("too late").check(try decide(started))
    }
}
