import Foundation
import Logging
import PostgresNIO

/// Durable storage of verified notifications together with their processing jobs.
public enum NotificationStore {
    /// The job kind that processes a stored notification.
    public static let processJobKind = "process_notification"

    /// Inserts notifications and one processing job for each new one, in the caller's transaction,
    /// and wakes the workers on commit. Notifications already stored (Apple's retries share the
    /// notificationUUID) are skipped. Returns the UUIDs that were new.
    ///
    /// One statement for the whole batch: the ingest endpoint commits concurrent requests together.
    @discardableResult
    public static func insert(_ records: [NotificationRecord], connection: PostgresConnection, logger: Logger) async throws -> Set<UUID> {
        guard !records.isEmpty else { return [] }
        // Arrays cannot carry NULL through PostgresNIO's encoders, so '' stands for NULL and NULLIF restores it.
        let rows = try await connection.query(
            """
            WITH input AS (
                SELECT * FROM unnest(
                    \(records.map(\.notificationUUID))::uuid[], \(records.map(\.notificationType))::text[],
                    \(records.map { $0.subtype ?? "" })::text[], \(records.map(\.bundleId))::text[],
                    \(records.map(\.environment))::text[], \(records.map(\.signedDateMillis))::bigint[],
                    \(records.map { $0.originalTransactionId ?? "" })::text[], \(records.map { $0.transactionId ?? "" })::text[],
                    \(records.map { $0.appAccountToken?.uuidString ?? "" })::text[], \(records.map { $0.productId ?? "" })::text[],
                    \(records.map(\.signedPayload))::text[]
                ) AS t(uuid, type, subtype, bundle, environment, signed_ms, otid, tid, token, product, payload)
            ), stored AS (
                INSERT INTO reclaim.notifications (
                    notification_uuid, notification_type, subtype, bundle_id, environment, signed_date,
                    original_transaction_id, transaction_id, app_account_token, product_id, signed_payload)
                SELECT uuid, type, NULLIF(subtype, ''), bundle, environment, to_timestamp(signed_ms / 1000.0),
                       NULLIF(otid, ''), NULLIF(tid, ''), NULLIF(token, '')::uuid, NULLIF(product, ''), payload
                FROM input
                ON CONFLICT (notification_uuid) DO NOTHING
                RETURNING notification_uuid
            ), queued AS (
                INSERT INTO reclaim.jobs (kind, notification_uuid)
                SELECT \(processJobKind), notification_uuid FROM stored
                RETURNING notification_uuid
            )
            SELECT notification_uuid FROM queued
            """,
            logger: logger
        )
        var inserted = Set<UUID>()
        for try await uuid in rows.decode(UUID.self) { inserted.insert(uuid) }
        if !inserted.isEmpty { try await JobQueue.notify(connection: connection, logger: logger) }
        return inserted
    }

    /// The stored raw payload of a notification.
    public static func signedPayload(of uuid: UUID, connection: PostgresConnection, logger: Logger) async throws -> String? {
        let rows = try await connection.query("SELECT signed_payload FROM reclaim.notifications WHERE notification_uuid = \(uuid)", logger: logger)
        for try await payload in rows.decode(String.self) { return payload }
        return nil
    }
}
