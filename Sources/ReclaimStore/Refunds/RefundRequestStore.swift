import Foundation
import Logging
import PostgresNIO

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
        public var body: String

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
            body: String
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
            self.body = body
        }
    }

    /// Records a request; nil when its notification was recorded before (a redelivery).
    public static func insert(_ request: NewRequest, connection: PostgresConnection, logger: Logger) async throws -> Int64? {
        let rows = try await connection.query(
            """
            INSERT INTO reclaim.refund_requests (notification_uuid, bundle_id, environment, original_transaction_id, transaction_id,
                product_id, product_type, reason, requested_at, arm, policy_id, body)
            VALUES (\(request.notificationUUID), \(request.bundleId), \(request.environment), \(request.originalTransactionId),
                \(request.transactionId), \(request.productId), \(request.productType), \(request.reason), \(request.requestedAt),
                \(request.arm), \(request.policyId), \(request.body)::jsonb)
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
        public let status: String
        public let body: String
    }

    /// The request, locked for this transaction (a redelivered job waits for the first).
    public static func lock(_ id: Int64, connection: PostgresConnection, logger: Logger) async throws -> Pending? {
        let rows = try await connection.query(
            """
            SELECT id, bundle_id, environment, transaction_id, requested_at, status, body::text
            FROM reclaim.refund_requests WHERE id = \(id) FOR UPDATE
            """,
            logger: logger
        )
        for try await (id, bundle, environment, transaction, requestedAt, status, body) in rows.decode(
            (Int64, String, String, String, Date, String, String).self
        ) {
            return Pending(
                id: id,
                bundleId: bundle,
                environment: environment,
                transactionId: transaction,
                requestedAt: requestedAt,
                status: status,
                body: body
            )
        }
        return nil
    }

    /// Apple's answer to the request: `sent` (202), `refused` (an error no retry cures) or `expired` (not sent).
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
            WHERE id = \(id)
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
    }

    /// `reclaim.refund_policy_rates`, in one environment or all.
    public static func rates(environment: String?, connection: PostgresConnection, logger: Logger) async throws -> [Rate] {
        let rows = try await connection.query(
            """
            SELECT bundle_id, environment, policy, requests, answered, refunded, declined, refund_rate, refund_rate_lower,
                   refund_rate_upper, difference, difference_lower, difference_upper
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
                    differenceUpper: dUpper
                )
            )
        }
        return rates
    }
}
