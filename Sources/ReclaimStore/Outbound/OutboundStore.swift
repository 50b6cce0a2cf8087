import Foundation
import Logging
import PostgresNIO
import ReclaimDomain

/// `reclaim.outbound_targets` and the outbound jobs of `reclaim.jobs` (those with a `target`): notification
/// forwarding and event webhooks. Jobs are queued where their event is written (the ingest statement for
/// forwards, the triggers of schema.sql for webhooks); each target's sender claims, completes and retries its own.
public enum OutboundStore {
    public static let forwardJobKind = "forward"
    public static let webhookJobKind = "webhook"
    /// The NOTIFY channel that wakes the senders (the workers' channel would wake every worker lane too).
    public static let channel = "reclaim_outbound"
    /// Outbound jobs end by time (``retryWindow``), not by a count of attempts; this only keeps the rescuer's
    /// `attempts >= max_attempts` test from ending them first.
    public static let maxAttempts = 1_000_000
    /// How long a target is retried before its job is dead: Apple retries its own notifications for 72 hours.
    public static let retryWindow: Double = 72 * 3600

    /// A configured target as mirrored into `reclaim.outbound_targets`.
    public struct Target: Sendable, Equatable {
        public var kind: String
        public var bundleId: String
        public var url: String
        public var environments: [String]
        public var events: [String]
        /// For forwarding: whether notifications about forgotten subscribers go there (`forwardForgotten`).
        public var forwardForgotten: Bool

        public init(kind: String, bundleId: String, url: String, environments: [String], events: [String], forwardForgotten: Bool = true) {
            self.kind = kind
            self.bundleId = bundleId
            self.url = url
            self.environments = environments
            self.events = events
            self.forwardForgotten = forwardForgotten
        }

        /// `forward com.example.app https://…`: readable in SQL, and a URL holds no space.
        public var id: String { "\(kind) \(bundleId) \(url)" }
    }

    /// The JSON a forward job carries: the body's content type and the text around the signedPayload.
    public static func forwardPayload(_ received: ReceivedBody) -> String {
        var object: [String: Any] = ["contentType": received.contentType]
        if received.isWhole {
            object["body"] = received.prefix
        } else {
            object["prefix"] = received.prefix
            object["suffix"] = received.suffix
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// The forward job's body again: its payload and the notification's signedPayload; `isWhole` when the payload
    /// carries the whole body (the signedPayload not needed).
    public static func forwardBody(payload: String, signedPayload: String) -> (body: [UInt8], contentType: String, isWhole: Bool)? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any],
            let contentType = object["contentType"] as? String
        else { return nil }
        if let whole = object["body"] as? String { return (Array(whole.utf8), contentType, true) }
        guard let prefix = object["prefix"] as? String, let suffix = object["suffix"] as? String else { return nil }
        let received = ReceivedBody(contentType: contentType, prefix: prefix, suffix: suffix, isWhole: false)
        return (received.body(signedPayload: signedPayload), contentType, false)
    }

    // MARK: Targets

    /// Mirrors the config's targets: new ones added, changed ones updated (a pause is kept), removed ones deleted,
    /// and the undelivered jobs of removed ones made dead (listed by `reclaim jobs dead`; requeued by `--retry`
    /// once the target is back). Returns how many jobs that made dead. Run it in a transaction: its lock is the
    /// transaction's.
    @discardableResult
    public static func sync(_ targets: [Target], connection: PostgresConnection, logger: Logger) async throws -> Int {
        // One process's sync at a time: two processes starting together must not interleave.
        try await connection.query("SELECT pg_advisory_xact_lock(hashtext('reclaim.outbound_targets'))", logger: logger)
        for target in targets {
            try await connection.query(
                """
                INSERT INTO reclaim.outbound_targets (id, kind, bundle_id, url, environments, events, forward_forgotten)
                VALUES (\(target.id), \(target.kind), \(target.bundleId), \(target.url), \(target.environments), \(target.events),
                        \(target.forwardForgotten))
                ON CONFLICT (id) DO UPDATE SET environments = EXCLUDED.environments, events = EXCLUDED.events,
                    forward_forgotten = EXCLUDED.forward_forgotten, synced_at = now()
                """,
                logger: logger
            )
        }
        let rows = try await connection.query(
            """
            WITH removed AS (
                DELETE FROM reclaim.outbound_targets WHERE NOT (id = ANY (\(targets.map(\.id)))) RETURNING id)
            UPDATE reclaim.jobs SET state = 'dead', updated_at = now(), locked_by = NULL, lease_expires_at = NULL,
                last_error = 'the target was removed from the configuration'
            WHERE target IN (SELECT id FROM removed) AND state IN ('available', 'retryable')
            RETURNING id
            """,
            logger: logger
        )
        var count = 0
        for try await _ in rows { count += 1 }
        return count
    }

    /// Pauses (or resumes) every target with this URL (of one app, when given); returns the ids it matched.
    public static func setPaused(
        _ paused: Bool,
        url: String,
        bundleId: String?,
        connection: PostgresConnection,
        logger: Logger
    ) async throws
        -> [String]
    {
        let rows = try await connection.query(
            """
            UPDATE reclaim.outbound_targets SET paused_at = CASE WHEN \(paused) THEN coalesce(paused_at, now()) END
            WHERE url = \(url) AND (\(bundleId)::text IS NULL OR bundle_id = \(bundleId)::text) RETURNING id
            """,
            logger: logger
        )
        var changed: [String] = []
        for try await id in rows.decode(String.self) { changed.append(id) }
        // Resumed: its sender looks for work at once rather than at its next poll.
        if !paused && !changed.isEmpty { try await connection.query("SELECT pg_notify(\(channel), '')", logger: logger) }
        return changed.sorted()
    }

    /// Each target's backlog, for `/console` and `reclaim webhooks list`.
    public struct TargetStatus: Sendable, Equatable {
        public var id: String
        public var kind: String
        public var bundleId: String
        public var url: String
        public var pausedAt: Date?
        /// Waiting to be sent (first attempt or a retry).
        public var queued: Int
        /// Of those, failed at least once.
        public var retrying: Int
        public var dead: Int
        /// Seconds since the oldest waiting job was queued; 0 when none waits.
        public var oldestAgeSeconds: Double
        /// The last error of a job that failed, if any waits or died.
        public var lastError: String?

        /// Failing: a job keeps failing, or has died.
        public var isFailing: Bool { retrying > 0 || dead > 0 }
    }

    /// Each target's backlog, failing ones first; `$1` limits it to one app (NULL: every app). /console shows it.
    public static let statusSQL = """
        SELECT t.id, t.kind, t.bundle_id, t.url, t.paused_at,
               count(j.id) FILTER (WHERE j.state IN ('available', 'retryable', 'running')) AS queued,
               count(j.id) FILTER (WHERE j.state IN ('available', 'retryable', 'running') AND j.attempts > 0) AS retrying,
               count(j.id) FILTER (WHERE j.state = 'dead') AS dead,
               coalesce(extract(epoch FROM now() - min(j.created_at) FILTER (WHERE j.state <> 'dead')), 0)::float8 AS oldest_seconds,
               (array_agg(j.last_error ORDER BY j.updated_at DESC) FILTER (WHERE j.last_error IS NOT NULL))[1] AS last_error
        FROM reclaim.outbound_targets t
        LEFT JOIN reclaim.jobs j ON j.target = t.id AND j.state IN ('available', 'retryable', 'running', 'dead')
        WHERE $1::text IS NULL OR t.bundle_id = $1
        GROUP BY t.id
        ORDER BY count(j.id) FILTER (WHERE j.attempts > 0 OR j.state = 'dead') > 0 DESC, t.bundle_id, t.kind, t.url
        """

    public static func status(bundleId: String? = nil, connection: PostgresConnection, logger: Logger) async throws -> [TargetStatus] {
        var bindings = PostgresBindings()
        bindings.append(bundleId)
        let rows = try await connection.query(PostgresQuery(unsafeSQL: statusSQL, binds: bindings), logger: logger)
        var result: [TargetStatus] = []
        for try await (id, kind, bundle, url, paused, queued, retrying, dead, age, error) in rows.decode(
            (String, String, String, String, Date?, Int64, Int64, Int64, Double, String?).self
        ) {
            result.append(
                TargetStatus(
                    id: id,
                    kind: kind,
                    bundleId: bundle,
                    url: url,
                    pausedAt: paused,
                    queued: Int(queued),
                    retrying: Int(retrying),
                    dead: Int(dead),
                    oldestAgeSeconds: age,
                    lastError: error
                )
            )
        }
        return result
    }

    // MARK: Jobs

    /// A claimed outbound job.
    public struct Job: Sendable {
        public var id: Int64
        public var kind: String
        public var attempt: Int
        public var createdAt: Date
        /// A forward's payload (``forwardPayload(_:)``), or a webhook's body: `{"type", "timestamp", "data"}`.
        public var payload: String
        /// A webhook's `webhook-id`, fixed when it was queued.
        public var webhookId: String?
        public var notificationUUID: UUID?
        /// For a forward: the notification's signedPayload (nil if the notification is gone; empty once redacted).
        public var signedPayload: String?
        /// For a forward: the notification is about a subscriber forgotten on request (or was redacted for one).
        public var forgotten: Bool

        public init(
            id: Int64,
            kind: String,
            attempt: Int,
            createdAt: Date,
            payload: String,
            webhookId: String? = nil,
            notificationUUID: UUID? = nil,
            signedPayload: String? = nil,
            forgotten: Bool = false
        ) {
            self.id = id
            self.kind = kind
            self.attempt = attempt
            self.createdAt = createdAt
            self.payload = payload
            self.webhookId = webhookId
            self.notificationUUID = notificationUUID
            self.signedPayload = signedPayload
            self.forgotten = forgotten
        }
    }

    /// Leases up to `limit` of `target`'s due jobs, oldest first, unless the target is paused. Commits at once.
    public static func claim(
        target: String,
        limit: Int,
        worker: String,
        lease: Duration,
        connection: PostgresConnection,
        logger: Logger
    ) async throws
        -> [Job]
    {
        let leaseSeconds = lease.seconds
        let rows = try await connection.query(
            """
            UPDATE reclaim.jobs AS j
            SET state = 'running', attempts = j.attempts + 1, locked_by = \(worker),
                lease_expires_at = now() + make_interval(secs => \(leaseSeconds)), updated_at = now(), claimed_at = now()
            FROM (
                SELECT id FROM reclaim.jobs
                WHERE target = \(target) AND state IN ('available', 'retryable') AND run_at <= now()
                  AND NOT EXISTS (SELECT 1 FROM reclaim.outbound_targets t WHERE t.id = \(target) AND t.paused_at IS NOT NULL)
                ORDER BY run_at, id
                LIMIT \(Int32(clamping: limit))
                FOR UPDATE SKIP LOCKED
            ) AS next
            WHERE j.id = next.id
            RETURNING j.id, j.kind, j.attempts, j.created_at,
                      -- A webhook's body is its event as jsonb prints it: the same bytes on every retry.
                      CASE WHEN j.kind = \(webhookJobKind) THEN (j.payload->'event')::text ELSE j.payload::text END,
                      j.payload->>'webhookId', j.notification_uuid,
                      (SELECT n.signed_payload FROM reclaim.notifications n WHERE n.notification_uuid = j.notification_uuid),
                      -- Read as the job is sent: an erasure that committed since the notification arrived counts.
                      coalesce((SELECT n.signed_payload = '' OR reclaim.is_forgotten(n.bundle_id, n.original_transaction_id, n.app_account_token)
                                FROM reclaim.notifications n WHERE n.notification_uuid = j.notification_uuid), false)
            """,
            logger: logger
        )
        var jobs: [Job] = []
        for try await (id, kind, attempts, created, payload, webhookId, uuid, signed, forgotten) in rows.decode(
            (Int64, String, Int32, Date, String, String?, UUID?, String?, Bool).self
        ) {
            jobs.append(
                Job(
                    id: id,
                    kind: kind,
                    attempt: Int(attempts),
                    createdAt: created,
                    payload: payload,
                    webhookId: webhookId,
                    notificationUUID: uuid,
                    signedPayload: signed,
                    forgotten: forgotten
                )
            )
        }
        return jobs
    }

    /// Marks sent jobs completed while this worker still holds them (the workers' completion statement).
    public static func complete(_ jobs: [Job], worker: String, connection: PostgresConnection, logger: Logger) async throws {
        guard !jobs.isEmpty else { return }
        _ = try await JobQueue.markCompleted(
            ids: jobs.map(\.id),
            attempts: jobs.map(\.attempt),
            worker: worker,
            connection: connection,
            logger: logger
        )
        try await forgetBodies(of: jobs.filter(\.forgotten), connection: connection, logger: logger)
    }

    /// A forward about a forgotten subscriber carries Apple's complete body until it is sent or dead
    /// (``SubscriberErasure``), and keeps nothing of it afterwards: the body goes, the content type stays.
    static func forgetBodies(of jobs: [Job], connection: PostgresConnection, logger: Logger) async throws {
        guard !jobs.isEmpty else { return }
        try await connection.query(
            """
            UPDATE reclaim.jobs SET payload = jsonb_build_object('contentType', payload->'contentType')
            WHERE id = ANY(\(jobs.map(\.id))) AND kind = \(forwardJobKind) AND state IN ('completed', 'dead')
              AND (payload ? 'body' OR payload ? 'prefix')
            """,
            logger: logger
        )
    }

    /// Records a failed send: retried after `retryDelay` seconds, or dead when that would pass the job's
    /// ``retryWindow``. Returns the new state, or nil when the job is no longer this worker's.
    public static func fail(
        _ job: Job,
        worker: String,
        error: String,
        retryDelay: Double,
        connection: PostgresConnection,
        logger: Logger
    ) async throws
        -> JobState?
    {
        let rows = try await connection.query(
            """
            UPDATE reclaim.jobs
            SET state = CASE WHEN now() + make_interval(secs => \(retryDelay)) > created_at + make_interval(secs => \(retryWindow))
                             THEN 'dead' ELSE 'retryable' END,
                run_at = now() + make_interval(secs => \(retryDelay)),
                last_error = \(String(error.prefix(2000))), locked_by = NULL, lease_expires_at = NULL, updated_at = now()
            WHERE id = \(job.id) AND attempts = \(Int32(clamping: job.attempt)) AND state = 'running' AND locked_by = \(worker)
            RETURNING state
            """,
            logger: logger
        )
        var state: JobState?
        for try await value in rows.decode(String.self) { state = JobState(rawValue: value) }
        if state == .dead, job.forgotten { try await forgetBodies(of: [job], connection: connection, logger: logger) }
        return state
    }
}
