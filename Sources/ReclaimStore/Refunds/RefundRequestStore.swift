import Foundation
import Logging
import PostgresNIO
import ReclaimDomain

/// `reclaim.refund_requests`: Apple's refund requests, the answers decided and sent, and Apple's decisions.
public enum RefundRequestStore {
    public struct NewRequest: Sendable {
        public var notificationUUID: UUID
        public var bundleId: String
        public var environment: String
        public var originalTransactionId: String
        public var transactionId: String
        public var productId: String?
        public var productType: String?
        public var reason: String?
        public var requestedAt: Date
        public var arm: String
        public var policyId: String?
        /// A held-out request's counterpart: the policy whose conditions held, or "(no policy)".
        public var counterpart: String?
        /// The answer to send; nil when none is (`unanswered` says why).
        public var body: String?
        public var unanswered: String?
        /// What the policies were given: stored so that a policy can be compared with like requests.
        public var facts: RefundFacts

        public init(
            notificationUUID: UUID,
            bundleId: String,
            environment: String,
            originalTransactionId: String,
            transactionId: String,
            productId: String?,
            productType: String?,
            reason: String?,
            requestedAt: Date,
            arm: String,
            policyId: String?,
            counterpart: String?,
            body: String?,
            unanswered: String?,
            facts: RefundFacts
        ) {
            self.notificationUUID = notificationUUID
            self.bundleId = bundleId
            self.environment = environment
            self.originalTransactionId = originalTransactionId
            self.transactionId = transactionId
            self.productId = productId
            self.productType = productType
            self.reason = reason
            self.requestedAt = requestedAt
            self.arm = arm
            self.policyId = policyId
            self.counterpart = counterpart
            self.body = body
            self.unanswered = unanswered
            self.facts = facts
        }
    }

    /// Records a request (`pending`, or `unanswered` with why); nil when its notification was recorded before (a
    /// redelivery).
    public static func insert(_ request: NewRequest, connection: PostgresConnection, logger: Logger) async throws -> Int64? {
        let facts = request.facts
        let status = request.unanswered == nil ? "pending" : "unanswered"
        let rows = try await connection.query(
            """
            INSERT INTO reclaim.refund_requests (notification_uuid, bundle_id, environment, original_transaction_id, transaction_id,
                product_id, product_type, reason, requested_at, arm, policy_id, body, status, apple_error, counterpart_policy,
                storefront, purchase_date, original_purchase_date, earlier_refunds, discount_redeemed, free_trial_seen,
                billing_plan_type, billing_period)
            VALUES (\(request.notificationUUID), \(request.bundleId), \(request.environment), \(request.originalTransactionId),
                \(request.transactionId), \(request.productId), \(request.productType), \(request.reason), \(request.requestedAt),
                \(request.arm), \(request.policyId), \(request.body)::jsonb, \(status), \(request.unanswered), \(request.counterpart),
                \(facts.storefront), \(facts.purchaseDate), \(facts.originalPurchaseDate), \(Int32(clamping: facts.earlierRefunds)),
                \(facts.discountRedeemed), \(facts.freeTrialSeen), \(facts.billingPlanType), \(facts.billingPeriod?.rawValue))
            ON CONFLICT (notification_uuid) DO NOTHING
            RETURNING id
            """,
            logger: logger
        )
        for try await id in rows.decode(Int64.self) { return id }
        return nil
    }

    /// What Reclaim has stored of a subscriber before a request: REFUND notifications, and the signed payloads of its
    /// notifications from Apple (newest 50), where a free trial may show.
    public static func history(
        bundleId: String,
        environment: String,
        originalTransactionId: String,
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> (refunds: Int, payloads: [String]) {
        var refunds = 0
        var payloads: [String] = []
        let rows = try await connection.query(
            """
            SELECT notification_type, signed_payload FROM reclaim.notifications
            WHERE bundle_id = \(bundleId) AND environment = \(environment) AND original_transaction_id = \(originalTransactionId)
              AND source = 'apple'
            ORDER BY signed_date DESC LIMIT 50
            """,
            logger: logger
        )
        for try await (type, payload) in rows.decode((String, String).self) {
            if type == "REFUND" { refunds += 1 }
            payloads.append(payload)
        }
        return (refunds, payloads)
    }

    public struct Pending: Sendable {
        public let id: Int64
        public let bundleId: String
        public let environment: String
        public let transactionId: String
        public let requestedAt: Date
        public let body: String
        /// The last failed attempt's status and error (a 401 while the key is rotated).
        public let appleStatus: Int?
        public let appleError: String?
    }

    /// The request while it waits for its answer; nil once settled. Read without a lock: the answer is sent with no
    /// transaction open, and a second sender (a job rescued after a crash) sends the same body.
    public static func pending(_ id: Int64, database: Database, logger: Logger) async throws -> Pending? {
        let rows = try await database.query(
            """
            SELECT id, bundle_id, environment, transaction_id, requested_at, body::text, apple_status, apple_error
            FROM reclaim.refund_requests WHERE id = \(id) AND status = 'pending' AND body IS NOT NULL
            """,
            logger: logger
        )
        for try await (id, bundle, environment, transaction, requestedAt, body, appleStatus, appleError) in rows.decode(
            (Int64, String, String, String, Date, String, Int32?, String?).self
        ) {
            return Pending(
                id: id,
                bundleId: bundle,
                environment: environment,
                transactionId: transaction,
                requestedAt: requestedAt,
                body: body,
                appleStatus: appleStatus.map(Int.init),
                appleError: appleError
            )
        }
        return nil
    }

    /// Apple's answer to the request: `sent` (202), `refused` (an error no retry cures) or `expired` (not sent). Only a
    /// pending request is settled: the first record stands.
    public static func settle(
        _ id: Int64,
        status: String,
        appleStatus: Int?,
        appleError: String?,
        connection: PostgresConnection,
        logger: Logger
    ) async throws {
        try await connection.query(
            """
            UPDATE reclaim.refund_requests
            SET status = \(status), apple_status = \(appleStatus), apple_error = \(appleError),
                sent_at = CASE WHEN \(status) = 'sent' THEN now() END
            WHERE id = \(id) AND status = 'pending'
            """,
            logger: logger
        )
    }

    /// A failed attempt of a request still pending (retried later): its status and error, for the operator.
    public static func noteAttempt(_ id: Int64, appleStatus: Int?, appleError: String, database: Database, logger: Logger) async throws {
        try await database.withConnection(logger: logger) {
            try await noteAttempt(id, appleStatus: appleStatus, appleError: appleError, connection: $0, logger: logger)
        }
    }

    /// The same, in the caller's transaction (a request held by a stop, with the job that looks again).
    public static func noteAttempt(_ id: Int64, appleStatus: Int?, appleError: String, connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            UPDATE reclaim.refund_requests SET apple_status = \(appleStatus), apple_error = \(appleError)
            WHERE id = \(id) AND status = 'pending'
            """,
            logger: logger
        )
    }

    /// Apple's decision on a transaction (REFUND: `refunded`, REFUND_DECLINED: `declined`) closes its newest open request.
    public static func recordOutcome(
        bundleId: String,
        environment: String,
        transactionId: String,
        outcome: String,
        at: Date,
        revocationType: String?,
        revocationPercentage: Int?,
        connection: PostgresConnection,
        logger: Logger
    ) async throws {
        try await connection.query(
            """
            UPDATE reclaim.refund_requests SET outcome = \(outcome), outcome_at = \(at), revocation_type = \(revocationType),
                revocation_percentage = \(revocationPercentage)
            WHERE id = (SELECT id FROM reclaim.refund_requests
                        WHERE bundle_id = \(bundleId) AND environment = \(environment) AND transaction_id = \(transactionId)
                          AND outcome IS NULL AND requested_at <= \(at)
                        ORDER BY requested_at DESC LIMIT 1)
            """,
            logger: logger
        )
    }

    public struct Rate: Sendable, Codable, Equatable {
        public let bundleId: String
        public let environment: String
        public let policy: String
        public let requests: Int
        public let answered: Int
        public let refunded: Int
        public let declined: Int
        public let refundRate: Double?
        public let refundRateLower: Double?
        public let refundRateUpper: Double?
        public let difference: Double?
        public let differenceLower: Double?
        public let differenceUpper: Double?
        /// The policy's own held-out counterparts that Apple decided (``difference`` compares with them).
        public let holdoutRefunded: Int
        public let holdoutDeclined: Int
        /// Requests not answered: the answer would have stated a fact Reclaim does not know.
        public let unanswered: Int
    }

    /// `reclaim.refund_policy_rates`, in one environment or all.
    public static func rates(environment: String?, connection: PostgresConnection, logger: Logger) async throws -> [Rate] {
        let rows = try await connection.query(
            """
            SELECT bundle_id, environment, policy, requests, answered, refunded, declined, refund_rate, refund_rate_lower,
                   refund_rate_upper, difference, difference_lower, difference_upper, holdout_refunded, holdout_declined, unanswered
            FROM reclaim.refund_policy_rates
            WHERE \(environment)::text IS NULL OR environment = \(environment)
            ORDER BY bundle_id, environment, policy
            """,
            logger: logger
        )
        var rates: [Rate] = []
        for try await row in rows {
            let (bundle, environment, policy, requests, answered, refunded, declined, rate, lower, upper, difference, dLower, dUpper) =
                try row.decode((String, String, String, Int64, Int64, Int64, Int64, Double?, Double?, Double?, Double?, Double?, Double?).self)
            // Past the 13 columns above, by name.
            let named = row.makeRandomAccess()
            let holdoutRefunded = try named["holdout_refunded"].decode(Int64.self)
            let holdoutDeclined = try named["holdout_declined"].decode(Int64.self)
            let unanswered = try named["unanswered"].decode(Int64.self)
            rates.append(
                Rate(
                    bundleId: bundle,
                    environment: environment,
                    policy: policy,
                    requests: Int(requests),
                    answered: Int(answered),
                    refunded: Int(refunded),
                    declined: Int(declined),
                    refundRate: rate,
                    refundRateLower: lower,
                    refundRateUpper: upper,
                    difference: difference,
                    differenceLower: dLower,
                    differenceUpper: dUpper,
                    holdoutRefunded: Int(holdoutRefunded),
                    holdoutDeclined: Int(holdoutDeclined),
                    unanswered: Int(unanswered)
                )
            )
        }
        return rates
    }
}
