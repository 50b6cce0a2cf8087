import Foundation
import Logging
import PostgresNIO

/// Whom `reclaim subscribers show` and `forget` are about: one of the two identifiers Reclaim keys subscribers by,
/// optionally limited to one app (and, for show, one environment).
public struct SubscriberLookup: Sendable, Hashable {
    public enum Identifier: Sendable, Hashable {
        case originalTransactionId(String)
        case appAccountToken(UUID)

        /// An original transaction id as Reclaim takes one from a person or a request: 1 to 64 ASCII digits.
        public static func isTransactionId(_ text: String) -> Bool {
            !text.isEmpty && text.count <= 64 && text.allSatisfy { $0.isASCII && $0.isNumber }
        }

        /// Either identifier, from one field: a UUID is an appAccountToken, digits an original transaction id.
        public init?(parsing text: String) {
            if let token = UUID(uuidString: text) {
                self = .appAccountToken(token)
            } else if Self.isTransactionId(text) {
                self = .originalTransactionId(text)
            } else {
                return nil
            }
        }
    }

    public var identifier: Identifier
    public var bundleId: String?
    public var environment: String?

    public init(_ identifier: Identifier, bundleId: String? = nil, environment: String? = nil) {
        self.identifier = identifier
        self.bundleId = bundleId
        self.environment = environment
    }

    var originalTransactionId: String? {
        if case .originalTransactionId(let id) = identifier { return id }
        return nil
    }

    var appAccountToken: UUID? {
        if case .appAccountToken(let token) = identifier { return token }
        return nil
    }

    /// The identifier as the audit log keys its pseudonym (``AuditLog/pseudonym(subscriber:connection:logger:)``): the
    /// original transaction id, or the appAccountToken in lower case.
    public var auditIdentifier: String {
        switch identifier {
        case .originalTransactionId(let id): id
        case .appAccountToken(let token): token.uuidString.lowercased()
        }
    }
}

/// Everything Reclaim keeps about one subscriber, for support: each subscription's state and, in order, its
/// notifications, the campaigns' decisions (skips with their reasons), the offers and what became of them, the
/// cancel-sheet decisions, refund requests, redemptions and grants. Times are ISO 8601 in UTC (`reclaim.iso8601`).
/// The JSON of `reclaim subscribers show --json` (docs/cli.md) and the console's subscriber page.
public struct SubscriberStory: Codable, Sendable, Equatable {
    public var subscriptions: [Subscription]
    /// Grants made to the token (or transaction id) that name no subscription found here.
    public var grantsWithoutSubscription: [Grant]
    /// When the identifier was forgotten (`reclaim subscribers forget`); nil when it was not.
    public var forgottenAt: String?

    public struct Subscription: Codable, Sendable, Equatable {
        public var bundleId: String
        public var environment: String
        public var originalTransactionId: String
        public var appAccountToken: UUID?
        public var productId: String?
        public var subscriptionGroupId: String?
        /// The product it renews to (`autoRenewProductId`): the plan where known.
        public var autoRenewProductId: String?
        public var status: String
        public var autoRenew: Bool?
        public var expiresAt: String?
        public var inBillingRetry: Bool?
        public var gracePeriodExpiresAt: String?
        public var expirationIntent: Int?
        public var storefront: String?
        /// The app account (`appTransactionId`), where a transaction named it.
        public var appTransactionId: String?
        /// When a parent or guardian withdrew consent for the app (RESCIND_CONSENT): nothing reaches them since.
        public var consentRescindedAt: String?
        /// The billing plan (`billingPlanType`: MONTHLY with a 12-month commitment, BILLED_UPFRONT), where known.
        public var billingPlanType: String?
        public var billingPeriodNumber: Int?
        public var totalBillingPeriods: Int?
        public var commitmentExpiresAt: String?
        public var commitmentAutoRenew: Bool?
        public var firstSeenAt: String
        public var updatedAt: String
        public var notifications: [Notification]
        public var decisions: [Decision]
        public var offers: [Offer]
        public var cancelSheetDecisions: [CancelSheetDecision]
        /// The app's cancel flows: each cancel intent, what answered it and the steps the app reported.
        public var cancelFlows: [CancelFlow]
        public var refundRequests: [RefundRequest]
        public var redemptions: [Redemption]
        public var grants: [Grant]
        /// The offer codes campaigns gave the subscriber (bearer secrets: the story is for admins).
        public var offerCodes: [OfferCode] = []
        /// Renewal-date extensions granted (make-goods), with Apple's outcome.
        public var extensions: [Extension] = []
        /// Set App Account Token calls (apps[].setAppAccountToken), with Apple's answer.
        public var appAccountTokenUpdates: [AccountTokenUpdate] = []
    }

    public struct AccountTokenUpdate: Codable, Sendable, Equatable {
        public var appAccountToken: String
        /// The token Apple's transaction held, when it was corrected.
        public var replaces: String?
        /// earlier-transaction or lookup.
        public var source: String
        /// pending, set or refused.
        public var status: String
        public var createdAt: String
        public var settledAt: String?
        public var appleError: String?
    }

    public struct Extension: Codable, Sendable, Equatable {
        public var id: String
        public var extendByDays: Int
        public var extendReasonCode: Int
        public var reason: String
        public var campaign: String
        /// pending, extended or refused.
        public var status: String
        public var createdAt: String
        /// Apple's new expiration date, once extended.
        public var effectiveDate: String?
        public var appleError: String?
    }

    public struct OfferCode: Codable, Sendable, Equatable {
        public var code: String
        /// The offer's reference name.
        public var offer: String
        public var campaign: String
        public var issuedAt: String
        public var expiresAt: String
        /// Inferred: the subscriber redeemed the offer, and this is the one code of it they were given.
        public var redeemedAt: String?
    }

    public struct Notification: Codable, Sendable, Equatable {
        public var notificationUUID: UUID
        public var type: String
        public var subtype: String?
        public var signedDate: String?
        public var receivedAt: String
        /// apple, reconcile or backfill.
        public var source: String
    }

    public struct Decision: Codable, Sendable, Equatable {
        public var campaign: String
        public var outcome: String
        public var reason: String
        public var variant: String?
        public var triggeredAt: String
        public var decidedAt: String
        /// The subscription's billing plan when decided (schema 28), where known.
        public var billingPlanType: String?
    }

    public struct Offer: Codable, Sendable, Equatable {
        public var id: UUID
        public var campaign: String?
        public var grantId: UUID?
        public var state: String
        public var productId: String
        public var offerIdentifier: String
        public var createdAt: String
        public var deliverableUntil: String
        public var deliveredAt: String?
        public var deliveryCount: Int
        public var redeemedAt: String?
        public var endedAt: String?
        public var endReason: String?
        /// What the app reported (shown, dismissed, purchase_started, …), in order.
        public var events: [String]
    }

    public struct CancelSheetDecision: Codable, Sendable, Equatable {
        public var campaign: String
        public var outcome: String
        public var reason: String
        public var answer: String?
        public var shadow: Bool
        public var decidedAt: String
        public var saveOutcome: String?
    }

    public struct CancelFlow: Codable, Sendable, Equatable {
        public var id: UUID
        public var decidedAt: String
        /// The survey answer; nil for none.
        public var surveyReason: String?
        public var campaign: String?
        public var outcome: String
        public var variant: String?
        public var answer: String
        public var reason: String
        /// lost, saved or open (first decisions that answered or held out); nil otherwise.
        public var saveOutcome: String?
        /// The steps the app reported, in order.
        public var steps: [String]
    }

    public struct RefundRequest: Codable, Sendable, Equatable {
        public var requestedAt: String
        public var reason: String?
        public var arm: String
        public var policy: String?
        public var status: String
        public var outcome: String?
        /// The refunded transaction's billing plan, and whether its period was the current one or a past one.
        public var billingPlanType: String?
        public var billingPeriod: String?
    }

    public struct Redemption: Codable, Sendable, Equatable {
        public var redeemedAt: String
        public var productId: String?
        public var offerIdentifier: String?
        /// Apple's offerType (2 promotional, 3 offer code, 4 win-back, 5 retention offer).
        public var offerType: Int?
        public var price: Int64?
        public var currency: String?
    }

    public struct Grant: Codable, Sendable, Equatable {
        public var id: UUID
        public var productId: String
        public var offerIdentifier: String
        public var reason: String
        public var campaign: String?
        public var createdAt: String
    }
}

extension SubscriberStory.Subscription {
    /// The state in one line, as support reads it (the command line and the console).
    public var stateSummary: String {
        var state = "\(productId ?? "no product yet"): \(status)"
        if let autoRenew { state += ", auto-renew \(autoRenew ? "on" : "off")" }
        if let autoRenewProductId, autoRenewProductId != productId { state += " (renews to \(autoRenewProductId))" }
        if let expiresAt { state += ", expires \(expiresAt)" }
        if inBillingRetry == true { state += ", in billing retry" }
        if let gracePeriodExpiresAt { state += ", grace period until \(gracePeriodExpiresAt)" }
        if let billingPlanType { state += ", plan \(billingPlanType)" }
        if let number = billingPeriodNumber, let total = totalBillingPeriods { state += " (period \(number) of \(total))" }
        if let commitmentExpiresAt {
            state += ", commitment ends \(commitmentExpiresAt)" + (commitmentAutoRenew == false ? " without renewing" : "")
        }
        if let consentRescindedAt {
            state +=
                "; consent withdrawn by a parent or guardian on \(consentRescindedAt) (RESCIND_CONSENT): no campaign, grant or cancel-sheet answer since"
        }
        return state
    }
}

extension SubscriberStore {
    /// The story of every subscription `lookup` finds (by either identifier, in its app and environment when
    /// given), oldest first. Read in one statement that builds the JSON; empty when nothing matches.
    public static func story(_ lookup: SubscriberLookup, connection: PostgresConnection, logger: Logger) async throws -> SubscriberStory {
        let (otid, token) = (lookup.originalTransactionId, lookup.appAccountToken)
        let rows = try await connection.query(
            """
            WITH found AS (
                SELECT * FROM reclaim.subscriptions s
                WHERE (s.original_transaction_id = \(otid)::text OR s.app_account_token = \(token)::uuid)
                  AND (\(lookup.bundleId)::text IS NULL OR s.bundle_id = \(lookup.bundleId))
                  AND (\(lookup.environment)::text IS NULL OR s.environment = \(lookup.environment))
            ), grant_rows AS (
                SELECT g.*, jsonb_build_object('id', g.id, 'productId', g.product_id, 'offerIdentifier', g.offer_identifier,
                                               'reason', g.reason, 'campaign', g.campaign, 'createdAt', reclaim.iso8601(g.created_at)) AS j
                FROM reclaim.grants g
                WHERE (g.original_transaction_id = \(otid)::text OR g.app_account_token = \(token)::uuid
                       OR (g.bundle_id, g.original_transaction_id) IN (SELECT bundle_id, original_transaction_id FROM found)
                       OR (g.bundle_id, g.app_account_token) IN (SELECT bundle_id, app_account_token FROM found))
                  AND (\(lookup.bundleId)::text IS NULL OR g.bundle_id = \(lookup.bundleId))
            ), stories AS (
                SELECT s.first_seen_at, jsonb_build_object(
                    'bundleId', s.bundle_id, 'environment', s.environment, 'originalTransactionId', s.original_transaction_id,
                    'appAccountToken', s.app_account_token, 'productId', s.product_id, 'subscriptionGroupId', s.subscription_group_id,
                    'autoRenewProductId', s.auto_renew_product_id, 'status', s.status, 'autoRenew', s.auto_renew,
                    'expiresAt', reclaim.iso8601(s.expires_at), 'inBillingRetry', s.in_billing_retry,
                    'gracePeriodExpiresAt', reclaim.iso8601(s.grace_period_expires_at), 'expirationIntent', s.expiration_intent,
                    'storefront', s.storefront, 'appTransactionId', s.app_transaction_id,
                    'consentRescindedAt', reclaim.iso8601(s.consent_rescinded_at), 'billingPlanType', s.billing_plan_type,
                    'billingPeriodNumber', s.billing_period_number, 'totalBillingPeriods', s.total_billing_periods,
                    'commitmentExpiresAt', reclaim.iso8601(s.commitment_expires_at), 'commitmentAutoRenew', s.commitment_auto_renew,
                    'firstSeenAt', reclaim.iso8601(s.first_seen_at), 'updatedAt', reclaim.iso8601(s.updated_at),
                    'notifications', coalesce((
                        SELECT jsonb_agg(jsonb_build_object('notificationUUID', n.notification_uuid, 'type', n.notification_type,
                                   'subtype', n.subtype, 'signedDate', reclaim.iso8601(n.signed_date),
                                   'receivedAt', reclaim.iso8601(n.received_at), 'source', n.source) ORDER BY n.signed_date, n.received_at)
                        FROM reclaim.notifications n
                        WHERE n.bundle_id = s.bundle_id AND n.environment = s.environment AND n.original_transaction_id = s.original_transaction_id), '[]'),
                    'decisions', coalesce((
                        SELECT jsonb_agg(jsonb_build_object('campaign', d.campaign_id, 'outcome', d.outcome, 'reason', d.reason,
                                   'variant', d.variant_id, 'triggeredAt', reclaim.iso8601(d.triggered_at),
                                   'decidedAt', reclaim.iso8601(d.decided_at), 'billingPlanType', d.billing_plan_type)
                               ORDER BY d.decided_at, d.campaign_id)
                        FROM reclaim.campaign_decisions d
                        WHERE d.bundle_id = s.bundle_id AND d.environment = s.environment AND d.original_transaction_id = s.original_transaction_id), '[]'),
                    'offers', coalesce((
                        SELECT jsonb_agg(jsonb_build_object('id', o.id, 'campaign', o.campaign_id, 'grantId', o.grant_id, 'state', o.state,
                                   'productId', o.product_id, 'offerIdentifier', o.offer_identifier, 'createdAt', reclaim.iso8601(o.created_at),
                                   'deliverableUntil', reclaim.iso8601(o.deliverable_until), 'deliveredAt', reclaim.iso8601(o.delivered_at),
                                   'deliveryCount', o.delivery_count, 'redeemedAt', reclaim.iso8601(o.redeemed_at),
                                   'endedAt', reclaim.iso8601(o.ended_at), 'endReason', o.end_reason,
                                   'events', coalesce((SELECT jsonb_agg(e.event ORDER BY e.occurred_at) FROM reclaim.offer_events e WHERE e.offer_id = o.id), '[]'))
                               ORDER BY o.created_at)
                        FROM reclaim.offers o
                        WHERE o.bundle_id = s.bundle_id AND o.environment = s.environment AND o.original_transaction_id = s.original_transaction_id), '[]'),
                    'cancelSheetDecisions', coalesce((
                        SELECT jsonb_agg(jsonb_build_object('campaign', c.campaign_id, 'outcome', c.outcome, 'reason', c.reason,
                                   'answer', c.answer, 'shadow', c.shadow, 'decidedAt', reclaim.iso8601(c.decided_at),
                                   'saveOutcome', c.save_outcome) ORDER BY c.decided_at)
                        FROM reclaim.cancel_sheet_decisions c
                        WHERE c.bundle_id = s.bundle_id AND c.environment = s.environment AND c.original_transaction_id = s.original_transaction_id
                          AND c.repeat_of IS NULL), '[]'),
                    'cancelFlows', coalesce((
                        SELECT jsonb_agg(jsonb_build_object('id', f.id, 'decidedAt', reclaim.iso8601(f.decided_at), 'surveyReason', f.survey_reason,
                                   'campaign', f.campaign_id, 'outcome', f.outcome, 'variant', f.variant_id, 'answer', f.answer,
                                   'reason', f.reason, 'saveOutcome', (SELECT x.save_outcome FROM reclaim.cancel_flow_outcomes x WHERE x.id = f.id),
                                   'steps', coalesce((SELECT jsonb_agg(e.step ORDER BY e.at, e.id) FROM reclaim.cancel_flow_events e WHERE e.flow_id = f.id), '[]'))
                               ORDER BY f.decided_at)
                        FROM reclaim.cancel_flow_decisions f
                        WHERE f.bundle_id = s.bundle_id AND f.environment = s.environment AND f.original_transaction_id = s.original_transaction_id), '[]'),
                    'refundRequests', coalesce((
                        SELECT jsonb_agg(jsonb_build_object('requestedAt', reclaim.iso8601(r.requested_at), 'reason', r.reason, 'arm', r.arm,
                                   'policy', r.policy_id, 'status', r.status, 'outcome', r.outcome, 'billingPlanType', r.billing_plan_type,
                                   'billingPeriod', r.billing_period) ORDER BY r.requested_at)
                        FROM reclaim.refund_requests r
                        WHERE r.bundle_id = s.bundle_id AND r.environment = s.environment AND r.original_transaction_id = s.original_transaction_id), '[]'),
                    'redemptions', coalesce((
                        SELECT jsonb_agg(jsonb_build_object('redeemedAt', reclaim.iso8601(x.redeemed_at), 'productId', x.product_id,
                                   'offerIdentifier', x.offer_identifier, 'offerType', x.offer_type, 'price', x.price,
                                   'currency', x.currency) ORDER BY x.redeemed_at)
                        FROM reclaim.offer_redemptions x
                        WHERE x.bundle_id = s.bundle_id AND x.environment = s.environment AND x.original_transaction_id = s.original_transaction_id), '[]'),
                    'grants', coalesce((
                        SELECT jsonb_agg(g.j ORDER BY g.created_at) FROM grant_rows g
                        WHERE g.bundle_id = s.bundle_id
                          AND (g.original_transaction_id = s.original_transaction_id OR g.app_account_token = s.app_account_token)), '[]'),
                    'offerCodes', coalesce((
                        SELECT jsonb_agg(jsonb_build_object('code', c.code, 'offer', c.offer_reference_name, 'campaign', d.campaign_id,
                                   'issuedAt', reclaim.iso8601(c.issued_at), 'expiresAt', reclaim.iso8601(c.expires_at),
                                   'redeemedAt', reclaim.iso8601(c.redeemed_at)) ORDER BY c.issued_at)
                        FROM reclaim.offer_codes c JOIN reclaim.campaign_decisions d ON d.id = c.decision_id
                        WHERE c.bundle_id = s.bundle_id AND c.environment = s.environment AND c.original_transaction_id = s.original_transaction_id), '[]'),
                    'extensions', coalesce((
                        SELECT jsonb_agg(jsonb_build_object('id', x.id, 'extendByDays', x.extend_by_days, 'extendReasonCode', x.extend_reason_code,
                                   'reason', x.reason, 'campaign', x.campaign, 'status', x.status, 'createdAt', reclaim.iso8601(x.created_at),
                                   'effectiveDate', reclaim.iso8601(x.effective_date), 'appleError', x.apple_error) ORDER BY x.created_at)
                        FROM reclaim.renewal_extensions x
                        WHERE x.bundle_id = s.bundle_id AND x.environment = s.environment AND x.original_transaction_id = s.original_transaction_id), '[]'),
                    'appAccountTokenUpdates', coalesce((
                        SELECT jsonb_agg(jsonb_build_object('appAccountToken', u.app_account_token, 'replaces', u.replaces_token, 'source', u.source,
                                   'status', u.status, 'createdAt', reclaim.iso8601(u.created_at), 'settledAt', reclaim.iso8601(u.settled_at),
                                   'appleError', u.apple_error) ORDER BY u.created_at)
                        FROM reclaim.app_account_token_updates u
                        WHERE u.bundle_id = s.bundle_id AND u.environment = s.environment AND u.original_transaction_id = s.original_transaction_id), '[]')
                ) AS j
                FROM found s
            )
            SELECT jsonb_build_object(
                'subscriptions', coalesce((SELECT jsonb_agg(j ORDER BY first_seen_at) FROM stories), '[]'),
                'grantsWithoutSubscription', coalesce((
                    SELECT jsonb_agg(g.j ORDER BY g.created_at) FROM grant_rows g
                    WHERE NOT EXISTS (SELECT 1 FROM found s WHERE s.bundle_id = g.bundle_id
                                        AND (g.original_transaction_id = s.original_transaction_id OR g.app_account_token = s.app_account_token))), '[]'),
                'forgottenAt', (
                    SELECT reclaim.iso8601(max(e.erased_at)) FROM reclaim.forgotten_subscribers f JOIN reclaim.erasures e ON e.id = f.erasure_id
                    WHERE (\(lookup.bundleId)::text IS NULL OR f.bundle_id IN ('', \(lookup.bundleId)))
                      AND ((f.kind = 'original_transaction_id' AND f.sha256 = reclaim.forgotten_hash('original_transaction_id', \(otid)::text))
                        OR (f.kind = 'app_account_token' AND f.sha256 = reclaim.forgotten_hash('app_account_token', \(token)::uuid::text)))))::text
            """,
            logger: logger
        )
        for try await json in rows.decode(String.self) {
            return try JSONDecoder().decode(SubscriberStory.self, from: Data(json.utf8))
        }
        throw PostgresRowMissing(what: "the subscriber's story")
    }
}
