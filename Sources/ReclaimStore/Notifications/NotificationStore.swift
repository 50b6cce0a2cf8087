import Foundation
import Logging
import PostgresNIO
import ReclaimDomain

/// `reclaim.notifications`: every statement that stores a notification. Ingest's batches go in with their
/// processing jobs; a backfill's implied notifications without (the backfill processes them itself).
public enum NotificationStore {
    /// The job kind that processes a stored notification.
    public static let processJobKind = "process_notification"

    /// Inserts notifications and one processing job for each new one, in the caller's transaction,
    /// and wakes the workers on commit. Notifications already stored (Apple's retries share the
    /// notificationUUID) are skipped. Returns the UUIDs that were new.
    ///
    /// One prepared statement for the whole batch, NOTIFY included: the ingest endpoint commits
    /// concurrent requests together, and this is its only round trip between BEGIN and COMMIT.
    @discardableResult
    /// - Parameter maxAttempts: the processing jobs' `max_attempts` (config `worker.maxAttempts`).
    public static func insert(
        _ records: [NotificationRecord],
        maxAttempts: Int = 20,
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> Set<UUID> {
        guard !records.isEmpty else { return [] }
        var inserted = Set<UUID>()
        for uuid in try await connection.run(InsertNotificationsStatement(records: records, maxAttempts: maxAttempts), logger: logger) {
            inserted.insert(uuid)
        }
        return inserted
    }

    /// The stored `signedPayload` of each notification, in one query; absent ones are missing from the result.
    public static func signedPayloads(of uuids: [UUID], connection: PostgresConnection, logger: Logger) async throws -> [UUID: StoredPayload] {
        let rows = try await connection.query(
            """
            SELECT notification_uuid, signed_payload, reclaim.is_forgotten(bundle_id, original_transaction_id, app_account_token)
            FROM reclaim.notifications WHERE notification_uuid = ANY(\(uuids))
            """,
            logger: logger
        )
        var payloads: [UUID: StoredPayload] = [:]
        for try await (uuid, payload, forgotten) in rows.decode((UUID, String, Bool).self) {
            // An empty payload was redacted by reclaim subscribers forget while its job waited.
            payloads[uuid] = StoredPayload(signedPayload: payload, forgotten: forgotten || payload.isEmpty)
        }
        return payloads
    }

    /// A stored notification as its job reads it.
    public struct StoredPayload: Sendable {
        public var signedPayload: String
        /// About a forgotten subscriber (reclaim.forgotten_subscribers): dropped, not processed.
        public var forgotten: Bool
    }

    /// When a notification was stored (`reclaim apple test-notification` looks up Apple's test); nil when it was not.
    public static func receivedAt(of uuid: UUID, postgres: Database, logger: Logger) async throws -> Date? {
        let rows = try await postgres.query("SELECT received_at FROM reclaim.notifications WHERE notification_uuid = \(uuid)", logger: logger)
        for try await received in rows.decode(Date.self) { return received }
        return nil
    }

    /// Stores a notification whose processing runs in the caller's transaction, so it gets no job: the one a
    /// backfilled status implies (`source` `backfill`), which the campaign decisions it triggers refer to.
    /// False when it was stored already (a second backfill of the same answer).
    public static func insertProcessedHere(
        _ record: NotificationRecord,
        source: String,
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> Bool {
        let signedDate = Date(unixMilliseconds: record.signedDateMillis)  // clamped: PostgresNIO traps on a far date
        let rows = try await connection.query(
            """
            INSERT INTO reclaim.notifications (notification_uuid, notification_type, subtype, bundle_id, environment, signed_date,
                original_transaction_id, transaction_id, app_account_token, product_id, signed_payload, source)
            VALUES (\(record.notificationUUID), \(record.notificationType), \(record.subtype), \(record.bundleId), \(record.environment),
                \(signedDate), \(record.originalTransactionId), \(record.transactionId), \(record.appAccountToken), \(record.productId),
                \(record.signedPayload), \(source))
            ON CONFLICT (notification_uuid) DO NOTHING
            RETURNING 1
            """,
            logger: logger
        )
        for try await _ in rows { return true }
        return false
    }
}
