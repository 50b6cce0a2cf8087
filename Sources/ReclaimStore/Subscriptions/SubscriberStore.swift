import Foundation
import Logging
import PostgresNIO
import ReclaimDomain

/// A job's two round trips to the database for one subscriber: read (and lock) everything the campaign rules
/// need, then write everything they decided. Round trips, not statements, were the worker's cost: seven small
/// queries per notification cost PostgreSQL and the worker more than the work itself.
public enum SubscriberStore {
    /// The subscription's row, created empty if new and locked until the transaction ends (jobs of one subscriber
    /// run one after the other), with the subscriber's offer history: decisions that were not skips, and the live
    /// offer. One statement.
    public static func lockWithHistory(
        _ subscriber: OfferStore.Subscriber,
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> (SubscriptionState, OfferHistory) {
        let (bundleId, environment, originalTransactionId) = (subscriber.bundleId, subscriber.environment, subscriber.originalTransactionId)
        // DO UPDATE (not DO NOTHING) so that an existing row is locked and returned by the same statement.
        let rows = try await connection.query(
            """
            WITH s AS (
                INSERT INTO reclaim.subscriptions AS s (bundle_id, environment, original_transaction_id)
                VALUES (\(bundleId), \(environment), \(originalTransactionId))
                ON CONFLICT (bundle_id, environment, original_transaction_id) DO UPDATE SET bundle_id = s.bundle_id
                RETURNING \(unescaped: SubscriptionStore.columns)
            ), d AS (
                SELECT campaign_id, outcome, triggered_at FROM reclaim.campaign_decisions
                WHERE bundle_id = \(bundleId) AND environment = \(environment) AND original_transaction_id = \(originalTransactionId)
                  AND outcome <> 'skipped'
            )
            SELECT s.*,
                   ARRAY(SELECT campaign_id FROM d ORDER BY triggered_at), ARRAY(SELECT outcome FROM d ORDER BY triggered_at),
                   ARRAY(SELECT triggered_at FROM d ORDER BY triggered_at),
                   o.id, o.campaign_id, o.priority, o.product_id, o.offer_identifier, o.triggered_at, o.grant_id IS NOT NULL
            FROM s LEFT JOIN reclaim.offers o
              ON o.bundle_id = \(bundleId) AND o.environment = \(environment) AND o.original_transaction_id = \(originalTransactionId)
             AND o.state IN ('ready', 'delivered')
            """,
            logger: logger
        )
        for try await row in rows {
            let state = try SubscriptionStore.state(from: row)
            let (
                _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, campaigns, outcomes, times, liveId, liveCampaign, priority, product,
                offer, triggeredAt, isGrant
            ) =
                try row.decode(
                    (
                        String, String, String, UUID?, String?, String?, String, Bool?, String?, Date?, Int16?, Bool?, Date?, [String],
                        String?, Date?, String?, String?, String?, Date?, UUID?,
                        [String], [String], [Date], UUID?, String?, Int?, String?, String?, Date?, Bool?
                    ).self
                )
            var history = OfferHistory()
            for (index, campaign) in campaigns.enumerated() {
                guard let outcome = CampaignDecision.Outcome(rawValue: outcomes[index]) else { continue }
                history.decisions.append(.init(campaignId: campaign, outcome: outcome, triggeredAt: times[index]))
            }
            if let liveId, let liveCampaign, let priority, let product, let offer, let triggeredAt {
                history.liveOffer = .init(
                    id: liveId,
                    campaignId: liveCampaign,
                    priority: priority,
                    productId: product,
                    offerIdentifier: offer,
                    triggeredAt: triggeredAt,
                    isGrant: isGrant ?? false
                )
            }
            return (state, history)
        }
        throw PostgresRowMissing(what: "subscription \(originalTransactionId)")
    }

    /// A decision to store, with its offer when it offered.
    public struct DecisionRecord: Sendable {
        public var id: UUID
        public var decision: CampaignDecision
        public var offer: NewOffer?

        public init(id: UUID, decision: CampaignDecision, offer: NewOffer?) {
            self.id = id
            self.decision = decision
            self.offer = offer
        }
    }

    /// Writes, in one statement, the new state (when `stateChanged`), the notification's decisions and the offers
    /// of those that offered. A decision this campaign already made on this notification is not written again,
    /// nor its offer: the offers insert reads the decisions insert's RETURNING.
    public static func persist(
        state: SubscriptionState,
        stateChanged: Bool,
        decisions: [DecisionRecord],
        notificationUUID: UUID,
        triggeredAt: Date,
        connection: PostgresConnection,
        logger: Logger
    ) async throws {
        guard stateChanged || !decisions.isEmpty else { return }
        let offers = decisions.compactMap(\.offer)
        try await connection.query(
            """
            WITH upd AS (
                UPDATE reclaim.subscriptions SET
                    app_account_token = \(state.appAccountToken), product_id = \(state.productId),
                    subscription_group_id = \(state.subscriptionGroupId), status = \(state.status.rawValue),
                    auto_renew = \(state.autoRenew), auto_renew_product_id = \(state.autoRenewProductId),
                    expires_at = \(state.expiresAt), expiration_intent = \(state.expirationIntent.map(Int16.init)),
                    in_billing_retry = \(state.inBillingRetry), grace_period_expires_at = \(state.gracePeriodExpiresAt),
                    eligible_win_back_offer_ids = \(state.eligibleWinBackOfferIds), storefront = \(state.storefront),
                    first_purchase_at = \(state.firstPurchaseAt), last_transaction_id = \(state.lastTransactionId),
                    last_notification_type = \(state.lastNotificationType), last_subtype = \(state.lastSubtype),
                    last_signed_date = \(state.lastSignedDate), last_notification_uuid = \(state.lastNotificationUUID),
                    updated_at = now()
                WHERE \(stateChanged) AND bundle_id = \(state.bundleId) AND environment = \(state.environment)
                  AND original_transaction_id = \(state.originalTransactionId)
            ), dec AS (
                INSERT INTO reclaim.campaign_decisions (
                    id, campaign_id, bundle_id, environment, original_transaction_id, app_account_token, notification_uuid,
                    triggered_at, outcome, reason)
                SELECT d.id, d.campaign, \(state.bundleId), \(state.environment), \(state.originalTransactionId),
                       \(state.appAccountToken)::uuid, \(notificationUUID), \(triggeredAt), d.outcome, d.reason
                FROM unnest(\(decisions.map(\.id))::uuid[], \(decisions.map(\.decision.campaign.id))::text[],
                            \(decisions.map(\.decision.outcome.rawValue))::text[], \(decisions.map(\.decision.reason))::text[])
                     AS d(id, campaign, outcome, reason)
                ON CONFLICT (campaign_id, notification_uuid) DO NOTHING
                RETURNING id
            )
            INSERT INTO reclaim.offers (
                id, decision_id, bundle_id, environment, original_transaction_id, app_account_token, campaign_id,
                source_notification_uuid, triggered_at, priority, product_id, offer_identifier, key_id, nonce, signed_at,
                application_username, storekit1_signature, storekit2_jws, deliverable_until)
            SELECT o.id, o.decision, \(state.bundleId), \(state.environment), \(state.originalTransactionId),
                   \(state.appAccountToken)::uuid, o.campaign, \(notificationUUID), \(triggeredAt), o.priority, o.product, o.offer,
                   o.key, o.nonce, o.signed_at, o.username, o.sk1, o.sk2, o.until
            FROM unnest(\(offers.map(\.id))::uuid[], \(offers.map { $0.decisionId ?? UUID() })::uuid[], \(offers.map(\.campaignId))::text[],
                        \(offers.map(\.priority))::bigint[], \(offers.map(\.productId))::text[], \(offers.map(\.offerIdentifier))::text[],
                        \(offers.map(\.signed.storeKit1.keyIdentifier))::text[], \(offers.map(\.signed.nonce))::uuid[],
                        \(offers.map(\.signed.signedAt))::timestamptz[], \(offers.map(\.signed.storeKit1.applicationUsername))::text[],
                        \(offers.map(\.signed.storeKit1.signature))::text[], \(offers.map(\.signed.storeKit2JWS))::text[],
                        \(offers.map(\.deliverableUntil))::timestamptz[])
                 AS o(id, decision, campaign, priority, product, offer, key, nonce, signed_at, username, sk1, sk2, until)
            WHERE o.decision IN (SELECT id FROM dec)
            """,
            logger: logger
        )
    }
}
