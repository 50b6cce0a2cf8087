import Foundation
import Logging
import PostgresNIO
import ReclaimDomain

/// `reclaim.cancel_flow_decisions` and `reclaim.cancel_flow_events`: the app's cancel intents, each campaign's answer,
/// and the steps the app reports. One flow per subscriber at a time: a flow runs in one transaction that holds the
/// subscriber's row (``GrantStore/lockSubscription(bundleId:originalTransactionId:appAccountToken:environment:connection:logger:)``),
/// so the first decision of a campaign is read and written by one flow; `follows` keeps that true in the database too.
public enum CancelFlowStore {
    /// The steps ReclaimClient reports (`reclaim.cancel_flow_events.step`).
    public static let steps: Set<String> = [
        "survey_skipped", "answer_shown", "accepted", "declined", "purchased", "purchase_pending", "purchase_failed", "manage_opened",
        "refund_opened", "fallback_opened",
    ]

    /// One cancel intent and what answered it.
    public struct Record: Sendable {
        public var id: UUID
        public var subscriber: SubscriberKey
        public var surveyReason: String?
        public var canShow: [String]
        /// The deciding campaign's decision; nil when none decided (`noneReason` says why).
        public var decision: CancelFlowDecision?
        public var noneReason: String
        public var billingPlanType: String?

        public init(
            id: UUID,
            subscriber: SubscriberKey,
            surveyReason: String?,
            canShow: [String],
            decision: CancelFlowDecision?,
            noneReason: String,
            billingPlanType: String?
        ) {
            self.id = id
            self.subscriber = subscriber
            self.surveyReason = surveyReason
            self.canShow = canShow
            self.decision = decision
            self.noneReason = noneReason
            self.billingPlanType = billingPlanType
        }
    }

    /// The subscriber's first decisions of cancel-flow campaigns, oldest first: what the cooldown, the maximum and
    /// the arm read (``CancelFlowEvaluator``).
    public static func earlier(
        of subscriber: SubscriberKey,
        connection: PostgresConnection,
        logger: Logger
    ) async throws
        -> [CancelSheetEvaluator.PastDecision]
    {
        let rows = try await connection.query(
            """
            SELECT id, campaign_id, outcome, variant_id, decided_at FROM reclaim.cancel_flow_decisions
            WHERE bundle_id = \(subscriber.bundleId) AND environment = \(subscriber.environment)
              AND original_transaction_id = \(subscriber.originalTransactionId) AND repeat_of IS NULL AND campaign_id IS NOT NULL
            ORDER BY decided_at
            """,
            logger: logger
        )
        var decisions: [CancelSheetEvaluator.PastDecision] = []
        for try await (id, campaign, outcome, variant, decidedAt) in rows.decode((UUID, String, String, String?, Date).self) {
            guard let outcome = CancelSheetDecision.Outcome(rawValue: outcome) else { continue }
            decisions.append(.init(id: id, campaignId: campaign, outcome: outcome, variantId: variant, decidedAt: decidedAt))
        }
        return decisions
    }

    /// Records the flow, and its offer (``OfferInsert``) when it answered with one, handed out at once (delivered, its
    /// signature with it: a later `GET /v1/offers` signs it afresh, as Apple wants one buy request per nonce).
    public static func record(
        _ record: Record,
        offer: NewOffer?,
        appAccountToken: UUID?,
        at time: Date,
        connection: PostgresConnection,
        logger: Logger
    ) async throws {
        let decision = record.decision
        let answer = decision.flatMap { $0.outcome == .answered || $0.outcome == .heldBack ? $0.variant?.answer : nil }
        let answerName: String
        var message: String?
        switch answer {
        case .offer?: answerName = "offer"
        case .message(let key)?:
            answerName = "message"
            message = key
        case .switchTo?: answerName = "switch"
        case nil: answerName = "nothing"
        }
        let outcome = decision.map { $0.outcome == .switchedOff ? "none" : $0.outcome.rawValue } ?? "none"
        let campaignId = outcome == "none" ? nil : decision?.campaign.id
        let variantId = answerName == "nothing" ? nil : decision?.variant.flatMap { $0.id.isEmpty ? nil : $0.id }
        try await connection.query(
            """
            INSERT INTO reclaim.cancel_flow_decisions (
                id, bundle_id, environment, original_transaction_id, survey_reason, can_show, campaign_id, outcome, variant_id, answer,
                message, answer_product_id, offer_identifier, repeat_of, follows, reason, save_window, billing_plan_type, decided_at)
            VALUES (
                \(record.id), \(record.subscriber.bundleId), \(record.subscriber.environment), \(record.subscriber.originalTransactionId),
                \(record.surveyReason), \(record.canShow), \(campaignId), \(outcome), \(variantId), \(answerName),
                \(message), \(answerName == "nothing" ? nil : answer?.productId), \(answerName == "offer" ? answer?.offerIdentifier : nil),
                \(campaignId == nil ? nil : decision?.repeatOf),
                \(campaignId == nil || decision?.repeatOf != nil ? nil : decision?.follows ?? CancelSheetStore.followsNothing),
                \(campaignId == nil ? record.noneReason : decision?.reason ?? record.noneReason),
                make_interval(secs => \(decision?.campaign.saveWindow ?? 0)), \(record.billingPlanType), \(time))
            """,
            logger: logger
        )
        guard let offer else { return }
        let row = OfferInsert.Row(offer: offer, subscriber: record.subscriber, appAccountToken: appAccountToken, source: nil, triggeredAt: time)
        try await connection.query(
            """
            \(OfferInsert.insert(where: "true"), with: [row])
            """,
            logger: logger
        )
        try await connection.query(
            """
            UPDATE reclaim.offers SET state = 'delivered', delivered_at = now(), delivery_count = 1, signature_delivered = true
            WHERE id = \(offer.id)
            """,
            logger: logger
        )
    }

    /// Records a step of a flow of `bundleId` (`flowId` nil: a survey skipped before any flow). false when the flow is
    /// not one of the app's: an unknown id and another app's answer alike.
    public static func recordEvent(
        flowId: UUID?,
        bundleId: String,
        step: String,
        error: String?,
        postgres: Database,
        logger: Logger
    ) async throws -> Bool {
        let rows = try await postgres.query(
            """
            INSERT INTO reclaim.cancel_flow_events (flow_id, bundle_id, step, error)
            SELECT \(flowId), \(bundleId), \(step), \(error)
            WHERE \(flowId)::uuid IS NULL
               OR EXISTS (SELECT 1 FROM reclaim.cancel_flow_decisions WHERE id = \(flowId) AND bundle_id = \(bundleId))
            RETURNING id
            """,
            logger: logger
        )
        for try await _ in rows { return true }
        return false
    }
}
