import Foundation
import ReclaimDomain
import Testing

/// Fixed values the campaign tests share: one app, one subscriber, one clock.
enum Fixture {
    static let bundleId = "com.example.reclaim"
    static let otherBundleId = "com.example.other"
    static let environment = "Sandbox"
    static let monthly = "com.example.pro.monthly"
    static let yearly = "com.example.pro.yearly"
    static let originalTransactionId = "2000000123456789"
    static let offerIdentifier = "winback50"
    static let day: TimeInterval = 86_400
    /// When the triggering notification of most tests is signed.
    static let t0 = Date(timeIntervalSince1970: 1_700_000_000)

    /// `t0` moved by `days` days (negative for earlier).
    static func days(_ days: Double) -> Date { t0.addingTimeInterval(days * day) }

    /// `t0` moved by `seconds` seconds.
    static func seconds(_ seconds: Double) -> Date { t0.addingTimeInterval(seconds) }
}

/// Factories for campaigns, subscription states, events and histories. Suites adopt it so tests read
/// `state(...)`, `event(...)`, `campaign(...)` without a prefix.
protocol CampaignFactories {}

extension CampaignFactories {
    /// A campaign of the fixture app triggered by `EXPIRED` (any subtype), no conditions, no holdout.
    func campaign(
        _ id: String = "winback",
        trigger: CampaignTrigger = CampaignTrigger(type: "EXPIRED"),
        bundleId: String = Fixture.bundleId,
        conditions: CampaignConditions = CampaignConditions(),
        offerIdentifier: String = Fixture.offerIdentifier,
        deliverableFor: TimeInterval = 7 * Fixture.day,
        cooldown: TimeInterval = 90 * Fixture.day,
        maxOffersPerSubscriber: Int? = nil,
        holdoutPercent: Int = 0,
        priority: Int = 0,
        startsAt: Date? = nil,
        endsAt: Date? = nil,
        standAsideForWinBack: Bool = true
    ) -> NotificationCampaign {
        NotificationCampaign(
            CampaignBasics(
                id: id,
                bundleId: bundleId,
                conditions: conditions,
                variants: [CampaignVariant(id: "", productId: Fixture.monthly, offerIdentifier: offerIdentifier)],
                cooldown: cooldown,
                maxOffersPerSubscriber: maxOffersPerSubscriber,
                holdoutPercent: holdoutPercent,
                priority: priority,
                startsAt: startsAt,
                endsAt: endsAt,
                standAsideForWinBack: standAsideForWinBack
            ),
            trigger: trigger,
            deliverableFor: deliverableFor
        )
    }

    /// The state of a subscriber who has bought before (a transaction was applied), as the worker holds it
    /// after applying the triggering notification (`lastSignedDate` is that notification's).
    func state(
        originalTransactionId: String = Fixture.originalTransactionId,
        bundleId: String = Fixture.bundleId,
        productId: String? = Fixture.monthly,
        storefront: String? = "USA",
        firstPurchaseAt: Date? = Fixture.days(-365),
        expirationIntent: Int? = 1,
        eligibleWinBackOfferIds: [String] = [],
        lastSignedDate: Date? = Fixture.t0
    ) -> SubscriptionState {
        var state = SubscriptionState(bundleId: bundleId, environment: Fixture.environment, originalTransactionId: originalTransactionId)
        state.productId = productId
        state.storefront = storefront
        state.firstPurchaseAt = firstPurchaseAt
        state.expirationIntent = expirationIntent
        state.eligibleWinBackOfferIds = eligibleWinBackOfferIds
        state.lastTransactionId = "2000000999999999"
        state.expiresAt = Fixture.days(-1)
        state.status = .expired
        state.autoRenew = false
        state.lastNotificationType = "EXPIRED"
        state.lastSubtype = "VOLUNTARY"
        state.lastSignedDate = lastSignedDate
        return state
    }

    /// A notification as the rules see it; `EXPIRED/VOLUNTARY` signed at `t0` unless told otherwise.
    func event(
        _ type: String = "EXPIRED",
        _ subtype: String? = "VOLUNTARY",
        at signedDate: Date = Fixture.t0,
        transaction: TransactionInfo? = nil
    ) -> SubscriptionEvent {
        SubscriptionEvent(notificationUUID: UUID(), type: type, subtype: subtype, signedDate: signedDate, transaction: transaction)
    }

    /// A decision of an earlier notification.
    func past(_ campaignId: String, _ outcome: CampaignDecision.Outcome, at triggeredAt: Date) -> OfferHistory.PastDecision {
        OfferHistory.PastDecision(campaignId: campaignId, outcome: outcome, triggeredAt: triggeredAt)
    }

    /// A live offer of the fixture product.
    func liveOffer(
        id: UUID = UUID(),
        campaignId: String = "live-campaign",
        priority: Int = 0,
        offerIdentifier: String = Fixture.offerIdentifier,
        triggeredAt: Date = Fixture.t0,
        isGrant: Bool = false
    ) -> OfferHistory.LiveOffer {
        OfferHistory.LiveOffer(
            id: id,
            campaignId: campaignId,
            priority: priority,
            productId: Fixture.monthly,
            offerIdentifier: offerIdentifier,
            triggeredAt: triggeredAt,
            isGrant: isGrant
        )
    }

    /// Every decision for `event` (the default one) on `state` (the default one); `now` defaults to an hour
    /// after the event was signed.
    func evaluate(
        _ campaigns: [NotificationCampaign],
        state: SubscriptionState? = nil,
        event: SubscriptionEvent? = nil,
        history: OfferHistory = OfferHistory(),
        now: Date? = nil
    ) -> [CampaignDecision] {
        let event = event ?? self.event()
        return CampaignEvaluator.evaluate(
            campaigns: campaigns,
            state: state ?? self.state(),
            event: event,
            history: history,
            now: now ?? event.signedDate.addingTimeInterval(3600)
        )
    }

    /// The one decision of a single campaign the event triggers.
    func decide(
        _ campaign: NotificationCampaign,
        state: SubscriptionState? = nil,
        event: SubscriptionEvent? = nil,
        history: OfferHistory = OfferHistory(),
        now: Date? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> CampaignDecision {
        let decisions = evaluate([campaign], state: state, event: event, history: history, now: now)
        try #require(decisions.count == 1, "expected one decision, got \(decisions.count)", sourceLocation: sourceLocation)
        return decisions[0]
    }
}

/// What a test expects of a decision: its outcome and a word its reason must contain.
struct Expected: Sendable, CustomStringConvertible {
    var outcome: CampaignDecision.Outcome
    var word: String

    static func offered(_ word: String = "eligible") -> Expected { Expected(outcome: .offered, word: word) }
    static func skipped(_ word: String) -> Expected { Expected(outcome: .skipped, word: word) }
    static func heldOut(_ word: String = "held out") -> Expected { Expected(outcome: .heldOut, word: word) }

    var description: String { "\(outcome.rawValue) (\(word))" }

    /// Records an issue unless `decision` has this outcome and a reason containing the word.
    func check(_ decision: CampaignDecision, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(decision.outcome == outcome, "\(comment?.rawValue ?? ""): reason: \(decision.reason)", sourceLocation: sourceLocation)
        #expect(decision.reason.contains(word), "\(comment?.rawValue ?? ""): reason lacks '\(word)'", sourceLocation: sourceLocation)
    }
}
