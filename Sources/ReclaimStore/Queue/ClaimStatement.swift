import Foundation
import PostgresNIO

/// The claim, prepared once per connection: it runs for every batch.
struct ClaimStatement: PostgresPreparedStatement {
    static let sql = """
        UPDATE reclaim.jobs AS j
        SET state = 'running', attempts = j.attempts + 1, locked_by = $2,
            lease_expires_at = now() + make_interval(secs => $3), updated_at = now(), claimed_at = now()
        FROM (
            SELECT id FROM reclaim.jobs
            WHERE state IN ('available', 'retryable') AND run_at <= now() AND target IS NULL AND kind <> ALL($4)
            ORDER BY priority DESC, run_at, id
            LIMIT $1
            FOR UPDATE SKIP LOCKED
        ) AS next,
        -- The claim alone need not wait for its WAL flush: if a crash loses it, the jobs are simply
        -- still available, and the completion's synchronous commit flushes the claim before it.
        -- This takes an fsync off every batch and off the wake-up path.
        (SELECT set_config('synchronous_commit', 'off', true)) AS claim_commit
        WHERE j.id = next.id
        RETURNING j.id, j.kind, j.payload::text, j.notification_uuid, j.attempts, j.max_attempts
        """
    typealias Row = Job

    var limit: Int32
    var worker: String
    var leaseSeconds: Double
    /// Kinds left to lanes of their own (jobs that call another service): never in a batch.
    var excluding: [String]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 4)
        bindings.append(limit)
        bindings.append(worker)
        bindings.append(leaseSeconds)
        bindings.append(excluding)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Job {
        let (id, kind, payload, notification, attempts, maxAttempts) = try row.decode((Int64, String, String, UUID?, Int32, Int32).self)
        return Job(id: id, kind: kind, payload: payload, notificationUUID: notification, attempt: Int(attempts), maxAttempts: Int(maxAttempts))
    }
}
