import Foundation
import Logging
import PostgresNIO

/// `reclaim.backfill_transactions`: which transaction ids a backfill has handled, so a second run skips them.
public enum BackfillStore {

    /// The ids of `bundleId` handled already.
    public static func done(bundleId: String, connection: PostgresConnection, logger: Logger) async throws -> Set<String> {
        var done = Set<String>()
        let rows = try await connection.query(
            "SELECT transaction_id FROM reclaim.backfill_transactions WHERE bundle_id = \(bundleId)",
            logger: logger
        )
        for try await id in rows.decode(String.self) { done.insert(id) }
        return done
    }

    /// Records one id as handled, on the connection that seeded its state: both commit together or not at all.
    public static func record(
        bundleId: String,
        transactionId: String,
        environment: String?,
        subscriptions: Int,
        result: String,
        connection: PostgresConnection,
        logger: Logger
    ) async throws {
        try await connection.query(
            """
            INSERT INTO reclaim.backfill_transactions (bundle_id, transaction_id, environment, subscriptions, result)
            VALUES (\(bundleId), \(transactionId), \(environment), \(subscriptions), \(result))
            ON CONFLICT (bundle_id, transaction_id) DO NOTHING
            """,
            logger: logger
        )
    }
}
