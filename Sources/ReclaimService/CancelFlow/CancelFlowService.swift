import Foundation
import Logging
import PostgresNIO
import ReclaimDomain
import ReclaimStore

/// The app's cancel flow (`POST /v1/cancel-flow`): the subscriber tapped "Cancel subscription" in the app and may have
/// said why; the app's cancel-flow campaigns (``CancelFlowEvaluator``) answer with an offer, a message, a switch, or
/// nothing, and the app then opens Apple's manage-subscriptions sheet (its refund request sheet for the survey answer
/// `refund`) unless the subscriber takes the answer.
///
/// Never in the way: whatever goes wrong (an app user with no known subscription, a stopped app, no campaign, the deadline) is answered
/// `none`, and the app goes on to Apple's sheet. Every answer is recorded as given (``CancelFlowStore``), in the
/// transaction that decided it; an answer that could not be committed within ``deadline`` is not given.
///
/// An offer answered here becomes the subscriber's one live offer (Apple allows one at a time): an older live offer,
/// of any campaign or grant, is withdrawn ("superseded by the cancel flow"), since the subscriber is leaving now. A later
/// cancel-sheet request (Apple's own sheet) is answered by the cancel-sheet campaigns as before: that answer is Apple's
/// to show, and the flow's offer stays live until it is redeemed, expires or is superseded.
struct CancelFlowService: Sendable {
    let postgres: Database
    let issuer: OfferIssuer
    let campaigns: [CancelFlowCampaign]
    /// Each app's cancel-flow survey answers (`apps[].cancelReasons`), by bundle id.
    let reasons: [String: [String]]
    let stops: AppStops
    var now: @Sendable () -> Date = Date.init

    /// How long the decision may take before it is committed: the subscriber is waiting to cancel
    /// (``Dependencies/cancelFlowDeadline``).
    var deadline: Duration = .seconds(2)

    /// Who is cancelling.
    enum Subscriber: Sendable {
        case appUser(UUID)
        /// Proven by `transaction`, a transaction Apple signed.
        case subscription(SubscriberKey, appAccountToken: UUID?, transaction: TransactionInfo)
    }

    struct Intent: Sendable {
        var bundleId: String
        var subscriber: Subscriber
        var reason: String?
        var canShow: Set<CancelFlowAnswerKind>
    }

    /// What the app is answered.
    struct Answer: Sendable {
        var flowId: UUID
        var originalTransactionId: String?
        var reason: String?
        var decision: CancelFlowDecision?
        /// The offer answered, signed, when the answer is an offer.
        var offer: NewOffer?
        var environment: String?
    }

    /// The deadline answered first: the transaction rolls back, nothing is recorded.
    struct TooLate: Error {}

    /// Decides and records the flow within ``deadline``; past it, or on any error, the app is answered `none` (its
    /// `flowId` then names no recorded flow) and the subscriber goes on to Apple's sheet. ``DeadlineRace`` holds the
    /// deadline even when the database does not answer; a decision that lost the race rolls back before its commit.
    func start(_ intent: Intent, logger: Logger) async -> Answer {
        let flowId = UUID()
        var none = Answer(flowId: flowId, originalTransactionId: nil, reason: intent.reason, decision: nil, offer: nil, environment: nil)
        if case .subscription(let key, _, _) = intent.subscriber { none.originalTransactionId = key.originalTransactionId }
        // Read before the transaction: a read of the stops is a connection of its own, and one asked for while the
        // transaction holds another waited for the pool (all of it, when every connection held a flow) until the deadline.
        let stop = await stops.stop(of: intent.bundleId, logger: logger)
        let outcome = await DeadlineRace<Answer?>.run(until: .now + deadline) { race in
            do {
                return try await postgres.transaction(logger: logger, deadline: deadline) { connection in
                    // A row another transaction holds, or a slow statement, ends here rather than at the server's 30 s.
                    try await connection.query(
                        "SELECT set_config('lock_timeout', '2s', true), set_config('statement_timeout', '2s', true)",
                        logger: logger
                    )
                    let answer = try await decide(intent, flowId: flowId, stop: stop, connection: connection, logger: logger)
                    guard race.commit() else { throw TooLate() }
                    return answer
                }
            } catch is TooLate {
                return nil
            } catch {
                logger.warning(
                    "cancel flow: not decided; answered none",
                    metadata: ["bundleId": "\(intent.bundleId)", "error": "\(String(reflecting: error))"]
                )
                return nil
            }
        }
        guard case .finished(let answer?) = outcome else {
            logger.warning("cancel flow: not decided within the deadline; answered none", metadata: ["bundleId": "\(intent.bundleId)"])
            return none
        }
        return answer
    }

    /// A subscription Reclaim has no state of, as the transaction Apple signed describes it.
    static func state(of key: SubscriberKey, appAccountToken: UUID?, transaction: TransactionInfo) -> SubscriptionState {
        var state = SubscriptionState(bundleId: key.bundleId, environment: key.environment, originalTransactionId: key.originalTransactionId)
        state.appAccountToken = appAccountToken
        state.productId = transaction.productId
        state.lastTransactionId = transaction.transactionId
        state.storefront = transaction.storefront
        state.billingPlanType = transaction.billingPlanType
        state.expiresAt = transaction.expiresDate.map { Date(unixMilliseconds: $0) }
        state.firstPurchaseAt = transaction.originalPurchaseDate.map { Date(unixMilliseconds: $0) }
        return state
    }

    private func decide(
        _ intent: Intent,
        flowId: UUID,
        stop: AppStopStore.Stop?,
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> Answer {
        var answer = Answer(flowId: flowId, originalTransactionId: nil, reason: intent.reason, decision: nil, offer: nil, environment: nil)
        // First, before any lock: an erasure or a withdrawal under way commits before this reads anything. An erasure
        // of a subscriber never stored has no row to wait on, and this would store them again on Apple's signature.
        try await WorkerBarrier.share(connection: connection, logger: logger)
        let named: (otid: String?, token: UUID?, environment: String?)
        switch intent.subscriber {
        case .appUser(let token): named = (nil, token, nil)
        case .subscription(let key, _, _): named = (key.originalTransactionId, nil, key.environment)
        }
        // One flow per subscriber at a time, known to Reclaim or not (a double tap, two devices): the second reads the
        // first's decision and repeats it.
        try await connection.query(
            "SELECT pg_advisory_xact_lock(hashtextextended(\(intent.bundleId) || ' ' || \(named.otid ?? named.token?.uuidString ?? ""), 77))",
            logger: logger
        )
        let locked = try await GrantStore.lockSubscription(
            bundleId: intent.bundleId,
            originalTransactionId: named.otid,
            appAccountToken: named.token,
            environment: named.environment,
            connection: connection,
            logger: logger
        )
        let state: SubscriptionState
        switch (locked, intent.subscriber) {
        case (let known?, _):
            state = known
        case (nil, .subscription(let key, let token, let transaction)):
            // A subscriber forgotten on request (their row renamed): nothing of them is stored again.
            if try await SubscriberErasure.isForgotten(
                bundleId: key.bundleId,
                originalTransactionId: key.originalTransactionId,
                appAccountToken: token,
                connection: connection,
                logger: logger
            ) {
                return answer
            }
            // No notification of it reached Reclaim yet, but Apple's signature proves the subscription: decided on what
            // the transaction says (an app whose notifications are not yet pointed at Reclaim still gets its flow).
            state = Self.state(of: key, appAccountToken: token, transaction: transaction)
        case (nil, .appUser):
            // Nothing to record the flow against: answered none, and its events are refused as of an unknown flow.
            return answer
        }
        answer.originalTransactionId = state.originalTransactionId
        answer.environment = state.environment
        let time = now()
        var record = CancelFlowStore.Record(
            id: flowId,
            subscriber: state.subscriber,
            surveyReason: intent.reason,
            canShow: CancelFlowAnswerKind.allCases.filter(intent.canShow.contains).map(\.rawValue),
            decision: nil,
            noneReason: "",
            billingPlanType: state.billingPlanType
        )
        if let stop {
            record.noneReason = "stopped: reclaim stop --app \(intent.bundleId) (\(stop.reason))"
        } else {
            let (decision, skipped) = CancelFlowEvaluator.decide(
                campaigns: campaigns,
                request: .init(
                    bundleId: intent.bundleId,
                    originalTransactionId: state.originalTransactionId,
                    reason: intent.reason,
                    canShow: intent.canShow,
                    now: time
                ),
                state: state,
                earlier: try await CancelFlowStore.earlier(of: state.subscriber, connection: connection, logger: logger),
                paused: try await CampaignStore.paused(connection: connection, logger: logger),
                // Read only where a campaign has the app's budget to hold its offers to (``CampaignBasics/discountBudget``).
                discounts: campaigns.contains { $0.bundleId == intent.bundleId && $0.discountBudget != nil }
                    ? try await OfferStore.discounts(of: state.subscriber, connection: connection, logger: logger) : []
            )
            record.decision = decision
            record.noneReason =
                skipped.isEmpty
                ? "no cancel-flow campaign for the app"
                : "no campaign answered: " + skipped.map { "\($0.campaignId): \($0.reason)" }.joined(separator: "; ")
            if let decision, decision.outcome == .switchedOff { record.noneReason = "\(decision.campaign.id): \(decision.reason)" }
        }
        answer.decision = record.decision?.outcome == .switchedOff ? nil : record.decision
        if case .offer(let product, let offerIdentifier, _, _)? = answer.decision?.answer, let decision = answer.decision {
            // A lapsed offer the sweep has not ended yet still holds the subscriber's one live place: end it first.
            issuer.metrics.expired(try await OfferStore.expireLapsed(of: state.subscriber, connection: connection, logger: logger))
            if let live = try await OfferStore.liveOffer(of: state.subscriber, includingPaused: true, connection: connection, logger: logger) {
                try await issuer.withdraw(
                    live.id,
                    reason: "superseded by the cancel flow's offer (\(decision.campaign.id), flow \(flowId.uuidString.lowercased()))",
                    connection: connection,
                    logger: logger
                )
            }
            var issue = OfferIssuer.Issue(
                subscriber: state,
                campaignId: decision.campaign.id,
                productId: product,
                offerIdentifier: offerIdentifier,
                priority: decision.campaign.priority,
                deliverableUntil: time.addingTimeInterval(decision.campaign.deliverableFor),
                decisionId: nil,
                grantId: nil
            )
            issue.variantId = decision.variant.flatMap { $0.id.isEmpty ? nil : $0.id }
            issue.cancelFlowDecisionId = flowId
            answer.offer = try issuer.issue(issue, purpose: "cancel_flow")
        }
        try await CancelFlowStore.record(
            record,
            offer: answer.offer,
            appAccountToken: state.appAccountToken,
            at: time,
            connection: connection,
            logger: logger
        )
        return answer
    }
}
