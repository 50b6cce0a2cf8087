import Foundation
import PostgresNIO

/// The batch insert behind `NotificationStore.insert`, prepared once per connection: it runs for every
/// ingest batch, and parsing and planning it anew each time was a large share of PostgreSQL's work.
struct InsertNotificationsStatement: PostgresPreparedStatement {
    static let sql = """
        WITH input AS (
            SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[],
                                 $7::text[], $8::text[], $9::text[], $10::text[], $11::text[])
                AS t(uuid, type, subtype, bundle, environment, signed_ms, otid, tid, token, product, payload)
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
            INSERT INTO reclaim.jobs (kind, notification_uuid, max_attempts)
            SELECT '\(NotificationStore.processJobKind)', notification_uuid, $12 FROM stored
            RETURNING notification_uuid
        ), forwarded AS (
            -- One forward job per target of the app and environment, in the notification's own transaction.
            INSERT INTO reclaim.jobs (kind, target, payload, notification_uuid, max_attempts)
            SELECT '\(OutboundStore.forwardJobKind)', t.id, f.body::jsonb, s.notification_uuid, \(OutboundStore.maxAttempts)
            FROM stored s
            JOIN (SELECT DISTINCT ON (uuid) uuid, bundle, environment, body
                  FROM unnest($1::uuid[], $4::text[], $5::text[], $13::text[]) AS i(uuid, bundle, environment, body)
                  WHERE body <> '') AS f ON f.uuid = s.notification_uuid
            JOIN reclaim.outbound_targets t ON t.kind = 'forward' AND t.bundle_id = f.bundle AND f.environment = ANY (t.environments)
            RETURNING 1
        )
        -- The scalar subquery runs once, and only when a job was queued: one NOTIFY per batch,
        -- delivered to idle workers at COMMIT.
        SELECT notification_uuid, (SELECT count(pg_notify('\(JobQueue.channel)', '')) FROM (SELECT 1 FROM queued LIMIT 1) AS any_queued),
               (SELECT count(pg_notify('\(OutboundStore.channel)', '')) FROM (SELECT 1 FROM forwarded LIMIT 1) AS any_forwarded)
        FROM queued
        """
    typealias Row = UUID

    /// Arrays cannot carry NULL through PostgresNIO's encoders, so '' stands for NULL and NULLIF restores it.
    let records: [NotificationRecord]
    let maxAttempts: Int

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 13)
        bindings.append(records.map(\.notificationUUID))
        bindings.append(records.map(\.notificationType))
        bindings.append(records.map { $0.subtype ?? "" })
        bindings.append(records.map(\.bundleId))
        bindings.append(records.map(\.environment))
        bindings.append(records.map(\.signedDateMillis))
        bindings.append(records.map { $0.originalTransactionId ?? "" })
        bindings.append(records.map { $0.transactionId ?? "" })
        bindings.append(records.map { $0.appAccountToken?.uuidString ?? "" })
        bindings.append(records.map { $0.productId ?? "" })
        bindings.append(records.map(\.signedPayload))
        bindings.append(Int32(clamping: maxAttempts))
        bindings.append(records.map { $0.received.map(OutboundStore.forwardPayload) ?? "" })
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> UUID {
        try row.decode((UUID, Int64, Int64).self).0
    }
}
