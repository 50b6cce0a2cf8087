import Foundation
import Logging
import PostgresNIO

/// `reclaim.backfill_transactions`: which transaction ids a backfill has handled, so a second run skips them.
public enum BackfillStore {

    /// The longest id stored: a line that long is no transaction id, and is kept only to say so.
    public static let maxIdLength = 100

    /// The ids of `bundleId` handled already (failed ones are tried again).
    public static func done(bundleId: String, connection: PostgresConnection, logger: Logger) async throws -> Set<String> {
        var done = Set<String>()
        let rows = try await connection.query(
            "SELECT transaction_id FROM reclaim.backfill_transactions WHERE bundle_id = \(bundleId) AND result <> 'failed'",
            logger: logger
        )
        for try await id in rows.decode(String.self) { done.insert(id) }
        return done
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
            WHERE b.result = 'failed'
            """,
            logger: logger
        )
    }
}
