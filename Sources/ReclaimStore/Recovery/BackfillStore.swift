import Foundation
import Logging
import PostgresNIO

/// `reclaim.backfill_transactions`: which transaction ids a backfill has handled, so a second run skips them.
public enum BackfillStore {

    /// The longest id stored: a line that long is no transaction id, and is kept only to say so.
    public static let maxIdLength = 100

    /// An id handled already: how, whether the campaigns decided for it, and whether Apple's answer is kept.
    public struct Done: Sendable, Equatable {
        public var result: String
        public var evaluated: Bool
        public var answered: Bool
    }

    /// The ids of `bundleId` handled already (failed ones are tried again).
    public static func done(bundleId: String, connection: PostgresConnection, logger: Logger) async throws -> [String: Done] {
        var done: [String: Done] = [:]
        let rows = try await connection.query(
            """
            SELECT t.transaction_id, t.result, t.evaluated_at IS NOT NULL,
                   EXISTS (SELECT 1 FROM reclaim.backfill_answers a WHERE a.bundle_id = t.bundle_id AND a.transaction_id = t.transaction_id)
            FROM reclaim.backfill_transactions t WHERE t.bundle_id = \(bundleId) AND t.result <> 'failed'
            """,
            logger: logger
        )
        for try await (id, result, evaluated, answered) in rows.decode((String, String, Bool, Bool).self) {
            done[id] = Done(result: result, evaluated: evaluated, answered: answered)
        }
        return done
    }

    /// One subscription of Apple's answer for an id, as kept.
    public struct Answer: Sendable, Equatable {
        public var environment: String
        public var originalTransactionId: String
        public var status: Int64?
        public var signedTransactionInfo: String
        public var signedRenewalInfo: String?

        public init(environment: String, originalTransactionId: String, status: Int64?, signedTransactionInfo: String, signedRenewalInfo: String?) {
            self.environment = environment
            self.originalTransactionId = originalTransactionId
            self.status = status
            self.signedTransactionInfo = signedTransactionInfo
            self.signedRenewalInfo = signedRenewalInfo
        }
    }

    /// Keeps Apple's answer for an id (replacing an earlier one: `--refresh`), on the connection that stores its state.
    public static func keep(_ answers: [Answer], bundleId: String, transactionId: String, connection: PostgresConnection, logger: Logger) async throws
    {
        let id = String(transactionId.prefix(maxIdLength))
        try await connection.query(
            "DELETE FROM reclaim.backfill_answers WHERE bundle_id = \(bundleId) AND transaction_id = \(id)",
            logger: logger
        )
        for answer in answers {
            try await connection.query(
                """
                INSERT INTO reclaim.backfill_answers (bundle_id, transaction_id, environment, original_transaction_id, status,
                    signed_transaction_info, signed_renewal_info)
                VALUES (\(bundleId), \(id), \(answer.environment), \(answer.originalTransactionId), \(answer.status.map(Int.init)),
                    \(answer.signedTransactionInfo), \(answer.signedRenewalInfo))
                ON CONFLICT (bundle_id, transaction_id, original_transaction_id) DO UPDATE
                SET environment = EXCLUDED.environment, status = EXCLUDED.status, signed_transaction_info = EXCLUDED.signed_transaction_info,
                    signed_renewal_info = EXCLUDED.signed_renewal_info, imported_at = now()
                """,
                logger: logger
            )
        }
    }

    /// Apple's kept answer for an id.
    public static func answers(bundleId: String, transactionId: String, connection: PostgresConnection, logger: Logger) async throws -> [Answer] {
        var found: [Answer] = []
        let rows = try await connection.query(
            """
            SELECT environment, original_transaction_id, status, signed_transaction_info, signed_renewal_info
            FROM reclaim.backfill_answers WHERE bundle_id = \(bundleId) AND transaction_id = \(String(transactionId.prefix(maxIdLength)))
            ORDER BY original_transaction_id
            """,
            logger: logger
        )
        for try await (environment, otid, status, transaction, renewal) in rows.decode((String, String, Int?, String, String?).self) {
            found.append(
                Answer(
                    environment: environment,
                    originalTransactionId: otid,
                    status: status.map(Int64.init),
                    signedTransactionInfo: transaction,
                    signedRenewalInfo: renewal
                )
            )
        }
        return found
    }

    /// The campaigns decided for this id's subscriptions (in the transaction that recorded their decisions).
    public static func markEvaluated(bundleId: String, transactionId: String, connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            UPDATE reclaim.backfill_transactions SET evaluated_at = now()
            WHERE bundle_id = \(bundleId) AND transaction_id = \(String(transactionId.prefix(maxIdLength)))
            """,
            logger: logger
        )
    }

    /// Records one id as handled, on the connection that seeded its state: both commit together or not at all. A
    /// failed id's row is replaced when a later run handles it.
    public static func record(
        bundleId: String,
        transactionId: String,
        environment: String?,
        subscriptions: Int,
        result: String,
        reason: String?,
        replace: Bool = false,
        connection: PostgresConnection,
        logger: Logger
    ) async throws {
        let id = String(transactionId.prefix(maxIdLength))
        let reason = reason.map { String($0.prefix(1000)) }
        try await connection.query(
            """
            INSERT INTO reclaim.backfill_transactions AS b (bundle_id, transaction_id, environment, subscriptions, result, reason)
            VALUES (\(bundleId), \(id), \(environment), \(subscriptions), \(result), \(reason))
            ON CONFLICT (bundle_id, transaction_id) DO UPDATE
            SET environment = EXCLUDED.environment, subscriptions = EXCLUDED.subscriptions, result = EXCLUDED.result,
                reason = EXCLUDED.reason, done_at = now()
            WHERE b.result = 'failed' OR \(replace)
            """,
            logger: logger
        )
    }
}
