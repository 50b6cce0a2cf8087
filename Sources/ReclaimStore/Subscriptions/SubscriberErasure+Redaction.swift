import Foundation
import Logging
import PostgresNIO

/// The redaction shared by `forget` and the worker (a notification about a forgotten subscriber): its forwards settled
/// per receiver, then its identifiers and signed payload removed.
extension SubscriberErasure {
    /// Settles the forward jobs of notifications about a forgotten subscriber before their signed payloads are
    /// emptied, per receiver (`apps[].forwarding[].forwardForgotten`, docs/privacy.md): to a receiver that gets them
    /// (true), a forward not yet sent carries Apple's complete body in its own payload from now on (the sender reads
    /// the notification's payload otherwise, and would send `{"signedPayload":""}`), and drops it once sent or dead
    /// (``OutboundStore``); to one that does not (false), it is deleted. Forwards already sent or dead are deleted.
    /// Returns the jobs deleted.
    static func settleForwards(of uuids: [UUID], connection: PostgresConnection, logger: Logger) async throws -> Int {
        guard !uuids.isEmpty else { return 0 }
        let rows = try await connection.query(
            """
            WITH dropped AS (
                DELETE FROM reclaim.jobs j
                WHERE j.kind = \(OutboundStore.forwardJobKind) AND j.notification_uuid = ANY(\(uuids))
                  AND (j.state IN ('completed', 'dead')
                       OR NOT coalesce((SELECT t.forward_forgotten FROM reclaim.outbound_targets t WHERE t.id = j.target), false))
                RETURNING 1
            ), carried AS (
                UPDATE reclaim.jobs j
                SET payload = jsonb_build_object(
                        'contentType', j.payload->'contentType',
                        'body', (j.payload->>'prefix') || n.signed_payload || (j.payload->>'suffix'))
                FROM reclaim.notifications n, reclaim.outbound_targets t
                WHERE j.kind = \(OutboundStore.forwardJobKind) AND j.notification_uuid = ANY(\(uuids))
                  AND n.notification_uuid = j.notification_uuid AND t.id = j.target AND t.forward_forgotten
                  AND j.state IN ('available', 'retryable', 'running') AND j.payload ? 'prefix' AND n.signed_payload <> ''
                RETURNING 1
            )
            SELECT (SELECT count(*) FROM dropped)::int, (SELECT count(*) FROM carried)::int
            """,
            logger: logger
        )
        for try await (dropped, _) in rows.decode((Int, Int).self) { return dropped }
        return 0
    }

    /// Redacts stored notifications about forgotten subscribers, as `forget` would have: kept, as Apple's
    /// notifications counted per day, without whom they were about; their forwards settled first.
    public static func redactNotifications(_ uuids: [UUID], connection: PostgresConnection, logger: Logger) async throws {
        guard !uuids.isEmpty else { return }
        _ = try await settleForwards(of: uuids, connection: connection, logger: logger)
        try await connection.query(
            """
            UPDATE reclaim.notifications
            SET original_transaction_id = NULL, transaction_id = NULL, app_account_token = NULL, signed_payload = ''
            WHERE notification_uuid = ANY(\(uuids))
            """,
            logger: logger
        )
    }
}
