import Foundation
import Logging
import PostgresNIO

/// The durable job queue in `reclaim.jobs`.
///
/// Life of a job: `enqueue` (in the caller's transaction, with a NOTIFY that PostgreSQL delivers
/// on commit) → `claim` (one statement, `FOR UPDATE SKIP LOCKED`, leases a batch to a worker and
/// commits, so a crash leaves a lease that the rescuer later returns) → the worker's transaction
/// runs the handlers and `markCompleted` in the same commit → or `markFailed` (retry with backoff,
/// dead after `max_attempts`).
///
/// Ownership is checked on completion: a job counts as this worker's only while it is `running`,
/// `locked_by` this worker and at the attempt it claimed. A worker whose lease was rescued and
/// re-claimed elsewhere finds nothing to complete and rolls its effects back, so every job's
/// effects are applied exactly once.
public struct JobQueue: Sendable {
    /// The NOTIFY channel that wakes idle workers.
    public static let channel = "reclaim_jobs"

    public let postgres: Database

    public init(postgres: Database) {
        self.postgres = postgres
    }

    // MARK: Enqueue

    /// Adds a job inside the caller's transaction; workers wake when it commits.
    /// Returns the job id, or nil when a job for the same notification and kind already exists.
    @discardableResult
    public static func enqueue(_ job: NewJob, connection: PostgresConnection, logger: Logger) async throws -> Int64? {
        let rows = try await connection.query(
            """
            INSERT INTO reclaim.jobs (kind, payload, notification_uuid, priority, run_at, max_attempts)
            VALUES (\(job.kind), \(job.payload)::jsonb, \(job.notificationUUID), \(job.priority), coalesce(\(job.runAt), now()), \(job.maxAttempts))
            ON CONFLICT (notification_uuid, kind) WHERE notification_uuid IS NOT NULL AND target IS NULL DO NOTHING
            RETURNING id
            """,
            logger: logger
        )
        var id: Int64?
        for try await value in rows.decode(Int64.self) { id = value }
        if id != nil { try await notify(connection: connection, logger: logger) }
        return id
    }

    /// Adds many jobs of one kind in one statement (bulk loads, benchmarks).
    public static func enqueue(
        kind: String,
        payloads: [String],
        maxAttempts: Int = NewJob.defaultMaxAttempts,
        connection: PostgresConnection,
        logger: Logger
    ) async throws {
        guard !payloads.isEmpty else { return }
        try await connection.query(
            "INSERT INTO reclaim.jobs (kind, payload, max_attempts) SELECT \(kind), p::jsonb, \(maxAttempts) FROM unnest(\(payloads)::text[]) AS p",
            logger: logger
        )
        try await notify(connection: connection, logger: logger)
    }

    private static func notify(connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("SELECT pg_notify(\(channel), '')", logger: logger)
    }

    // MARK: Claim and finish

    /// Leases up to `limit` due jobs to `worker` for `lease`, highest priority and oldest first,
    /// skipping rows other workers have locked. Commits before returning.
    /// Jobs of the `excluding` kinds are left to ``claimCall(kind:worker:lease:logger:)``.
    public func claim(limit: Int, worker: String, lease: Duration, excluding: [String] = [], logger: Logger) async throws -> [Job] {
        try await postgres.execute(
            ClaimStatement(limit: Int32(clamping: limit), worker: worker, leaseSeconds: lease.seconds, excluding: excluding),
            logger: logger
        )
        .reduce(into: []) { $0.append($1) }
    }

    /// Leases one due job of `kind`, oldest first: a job that calls another service runs alone, outside any
    /// transaction (`WorkerPool`'s call lanes). Not prepared: PostgreSQL plans an unnamed statement with its values,
    /// which lets the claim read `jobs_call_claim_idx`, whose predicate names the kinds.
    public func claimCall(kind: String, worker: String, lease: Duration, logger: Logger) async throws -> Job? {
        let rows = try await postgres.query(
            """
            UPDATE reclaim.jobs AS j
            SET state = 'running', attempts = j.attempts + 1, locked_by = \(worker),
                lease_expires_at = now() + make_interval(secs => \(lease.seconds)), updated_at = now(), claimed_at = now()
            FROM (
                SELECT id FROM reclaim.jobs
                WHERE state IN ('available', 'retryable') AND run_at <= now() AND target IS NULL AND kind = \(kind)
                ORDER BY run_at, id
                LIMIT 1
                FOR UPDATE SKIP LOCKED
            ) AS next
            WHERE j.id = next.id
            RETURNING j.id, j.kind, j.payload::text, j.notification_uuid, j.attempts, j.max_attempts
            """,
            logger: logger
        )
        for try await (id, kind, payload, notification, attempts, maxAttempts) in rows.decode((Int64, String, String, UUID?, Int32, Int32).self) {
            return Job(id: id, kind: kind, payload: payload, notificationUUID: notification, attempt: Int(attempts), maxAttempts: Int(maxAttempts))
        }
        return nil
    }

    /// Marks claimed jobs completed inside the caller's transaction and returns the ids this worker
    /// still owned. Jobs not returned were rescued and re-claimed: skip their effects.
    ///
    /// It is the first statement of every job transaction of the worker pool, and it first waits for an operator's
    /// action in progress (``WorkerBarrier``, shared: an erasure, a withdrawal): the job's later statements then see it
    /// committed. The wait comes before any row is locked here (a one-time filter).
    public static func markCompleted(_ jobs: [Job], worker: String, connection: PostgresConnection, logger: Logger) async throws -> Set<Int64> {
        try await markCompleted(
            ids: jobs.map(\.id),
            attempts: jobs.map(\.attempt),
            worker: worker,
            waitingForBarrier: true,
            connection: connection,
            logger: logger
        )
    }

    /// ``markCompleted(_:worker:connection:logger:)`` by id and attempt (the outbound senders' jobs too).
    static func markCompleted(
        ids: [Int64],
        attempts: [Int],
        worker: String,
        waitingForBarrier: Bool = false,
        connection: PostgresConnection,
        logger: Logger
    ) async throws
        -> Set<Int64>
    {
        let rows = try await connection.query(
            """
            UPDATE reclaim.jobs
            SET state = 'completed', completed_at = now(), updated_at = now(), locked_by = NULL, lease_expires_at = NULL
            WHERE (NOT \(waitingForBarrier) OR \(unescaped: WorkerBarrier.shared))
              AND (id, attempts) IN (SELECT * FROM unnest(\(ids)::bigint[], \(attempts.map { Int32(clamping: $0) })::int[]))
              AND state = 'running' AND locked_by = \(worker)
            RETURNING id
            """,
            logger: logger
        )
        var owned = Set<Int64>()
        for try await id in rows.decode(Int64.self) { owned.insert(id) }
        return owned
    }

    /// Records a failed attempt: `retryable` after `retryDelay`, or `dead` once attempts reach the maximum.
    /// Returns the new state, or nil when the job is no longer this worker's.
    @discardableResult
    public func markFailed(_ job: Job, worker: String, error: String, retryDelay: Double, logger: Logger) async throws -> JobState? {
        let rows = try await postgres.query(
            """
            UPDATE reclaim.jobs
            SET state = CASE WHEN attempts >= max_attempts THEN 'dead' ELSE 'retryable' END,
                run_at = now() + make_interval(secs => \(retryDelay)),
                last_error = \(String(error.prefix(2000))), locked_by = NULL, lease_expires_at = NULL, updated_at = now()
            WHERE id = \(job.id) AND attempts = \(Int32(job.attempt)) AND state = 'running' AND locked_by = \(worker)
            RETURNING state
            """,
            logger: logger
        )
        for try await state in rows.decode(String.self) { return JobState(rawValue: state) }
        return nil
    }

    /// Extends the leases of `jobs` while this worker still holds them. Rows locked by an open completion
    /// transaction are skipped: they are already safe from the rescuer.
    @discardableResult
    public func heartbeat(jobs: [Int64], worker: String, lease: Duration, logger: Logger) async throws -> Int {
        try await countRows(
            """
            UPDATE reclaim.jobs SET lease_expires_at = now() + make_interval(secs => \(lease.seconds)), updated_at = now()
            WHERE id IN (SELECT id FROM reclaim.jobs WHERE id = ANY(\(jobs)) AND state = 'running' AND locked_by = \(worker)
                         FOR UPDATE SKIP LOCKED)
            RETURNING id
            """,
            logger: logger
        )
    }

    /// Returns to the queue this worker's running jobs of `target` (nil: the workers' jobs, which have none) that it
    /// does not hold (`holding`: claimed and not finished, in its memory). After a claim failed on the client's
    /// side (its deadline passed, its connection dropped) PostgreSQL may still have committed it; the jobs it
    /// marked would otherwise wait out their lease, since this worker's owner lock is alive. A job returned while
    /// a claimer of this process had not yet recorded it is harmless: its completion names the attempt
    /// (``markCompleted(_:worker:connection:logger:)``), so only the latest claim of it runs. Returns how many.
    @discardableResult
    public func releaseUnheld(worker: String, holding: [Int64], target: String?, logger: Logger) async throws -> Int {
        try await countRows(
            """
            UPDATE reclaim.jobs SET state = 'available', locked_by = NULL, lease_expires_at = NULL, updated_at = now()
            WHERE id IN (SELECT id FROM reclaim.jobs
                         WHERE state = 'running' AND locked_by = \(worker) AND target IS NOT DISTINCT FROM \(target)
                           AND NOT (id = ANY(\(holding)))
                         FOR UPDATE SKIP LOCKED)
            RETURNING id
            """,
            logger: logger
        )
    }

    /// Returns this worker's unfinished jobs to the queue at once (graceful shutdown).
    @discardableResult
    public func release(worker: String, logger: Logger) async throws -> Int {
        try await countRows(
            """
            UPDATE reclaim.jobs SET state = 'available', locked_by = NULL, lease_expires_at = NULL, updated_at = now()
            WHERE id IN (SELECT id FROM reclaim.jobs WHERE state = 'running' AND locked_by = \(worker) FOR UPDATE SKIP LOCKED)
            RETURNING id
            """,
            logger: logger
        )
    }

    // MARK: Maintenance

    /// Returns running jobs whose worker is gone to `available` (or `dead` when that was the last attempt): those
    /// whose lease expired (a worker that hangs, or died unseen), and at once those of a worker whose database
    /// session ended. A worker holds a session-level advisory lock on `hashtextextended(locked_by, 0)` while it
    /// claims (WakeUpSignal's LISTEN session); PostgreSQL drops it when the session ends, as it does the moment a
    /// killed process's socket closes. So an owner whose lock this session can take (and gives back at once) is
    /// gone. Only ids ending in ``liveOwnerSuffix`` are judged by the lock: a claimer that holds none (an older
    /// version during a rolling upgrade) keeps its lease. (`pg_try_advisory_lock` per distinct owner, not a read
    /// of `pg_locks`, which takes every lock-table partition of the server.)
    @discardableResult
    public func rescueExpired(limit: Int = 1000, logger: Logger) async throws -> Int {
        try await countRows(
            """
            WITH owners AS (
                SELECT DISTINCT locked_by FROM reclaim.jobs WHERE state = 'running' AND locked_by LIKE \("%" + Self.liveOwnerSuffix)
            ), gone AS (
                -- CASE fixes the order: unlock only what was just locked.
                SELECT locked_by FROM owners
                WHERE CASE WHEN pg_try_advisory_lock(hashtextextended(locked_by, 0))
                           THEN pg_advisory_unlock(hashtextextended(locked_by, 0)) ELSE false END
            )
            UPDATE reclaim.jobs
            SET state = CASE WHEN attempts >= max_attempts THEN 'dead' ELSE 'available' END,
                last_error = CASE WHEN lease_expires_at < now() THEN 'lease expired: the worker stopped before finishing the job'
                                  ELSE 'the worker''s database session ended (process killed or disconnected) before it finished the job' END,
                -- run_at is kept: the job goes back to its place in the queue (it was due), not behind a backlog.
                locked_by = NULL, lease_expires_at = NULL, updated_at = now()
            WHERE id IN (
                SELECT id FROM reclaim.jobs
                WHERE state = 'running' AND (lease_expires_at < now() OR locked_by IN (SELECT locked_by FROM gone))
                ORDER BY lease_expires_at LIMIT \(Int32(limit)) FOR UPDATE SKIP LOCKED)
            RETURNING id
            """,
            logger: logger
        )
    }

    /// The end of the worker ids whose liveness is their advisory lock (see ``rescueExpired(limit:logger:)``).
    public static let liveOwnerSuffix = "#live"

    /// Deletes completed jobs older than `retention` (whole seconds), `batch` rows per transaction so no statement
    /// holds many locks or bloats the WAL at once (``Pruning``, what `reclaim prune` runs). Returns how many.
    @discardableResult
    public func pruneCompleted(olderThan retention: Duration, batch: Int = 1000, logger: Logger) async throws -> Int {
        let policy = Pruning.Policy(notifications: nil, completedJobs: retention.components.seconds, rejectedInputs: nil)
        return try await Pruning.run(policy, batchSize: batch, dryRun: false, postgres: postgres, logger: logger).completedJobs
    }

    // MARK: Inspection

    /// Jobs per state and the age of the oldest due job, for metrics and `reclaim jobs`.
    public struct Stats: Sendable, Equatable {
        public var counts: [JobState: Int] = [:]
        /// Seconds since the oldest available or retryable job became due; 0 when none waits.
        public var oldestDueAgeSeconds: Double = 0
        /// Seconds since the oldest running job was claimed; 0 when none runs. Far above `worker.lease`: stuck.
        public var oldestRunningAgeSeconds: Double = 0
    }

    public func stats(logger: Logger) async throws -> Stats {
        var stats = Stats()
        let rows = try await postgres.query(
            """
            SELECT state, count(*)::bigint,
                   coalesce(extract(epoch FROM now() - min(run_at) FILTER (WHERE run_at <= now())), 0)::float8,
                   coalesce(extract(epoch FROM now() - min(claimed_at)), 0)::float8
            FROM reclaim.jobs GROUP BY state
            """,
            logger: logger
        )
        for try await (state, count, age, claimedAge) in rows.decode((String, Int64, Double, Double).self) {
            guard let state = JobState(rawValue: state) else { continue }
            stats.counts[state] = Int(count)
            if state == .available || state == .retryable { stats.oldestDueAgeSeconds = max(stats.oldestDueAgeSeconds, age) }
            if state == .running { stats.oldestRunningAgeSeconds = claimedAge }
        }
        return stats
    }

    /// A dead job, as `reclaim jobs dead` lists it.
    public struct DeadJob: Sendable, Equatable {
        public let id: Int64
        public let kind: String
        public let attempts: Int
        public let lastError: String?
        public let failedAt: Date
        /// For a forward or webhook job: the target it could not reach.
        public let target: String?
    }

    public func deadJobs(limit: Int = 100, logger: Logger) async throws -> [DeadJob] {
        let rows = try await postgres.query(
            """
            SELECT id, kind, attempts, last_error, updated_at, target FROM reclaim.jobs
            WHERE state = 'dead' ORDER BY id LIMIT \(Int32(limit))
            """,
            logger: logger
        )
        var jobs: [DeadJob] = []
        for try await (id, kind, attempts, error, at, target) in rows.decode((Int64, String, Int32, String?, Date, String?).self) {
            jobs.append(DeadJob(id: id, kind: kind, attempts: Int(attempts), lastError: error, failedAt: at, target: target))
        }
        return jobs
    }

    /// Requeues dead jobs (one by id, or all) with a fresh set of attempts. Returns how many.
    @discardableResult
    public func retryDead(id: Int64?, logger: Logger) async throws -> Int {
        let rows = try await postgres.query(
            """
            WITH requeued AS (
                -- An outbound job's retry window (OutboundStore.retryWindow) counts from created_at: it starts again.
                UPDATE reclaim.jobs SET state = 'available', attempts = 0, run_at = now(), updated_at = now(),
                    created_at = CASE WHEN target IS NULL THEN created_at ELSE now() END
                WHERE state = 'dead' AND (\(id)::bigint IS NULL OR id = \(id)::bigint)
                RETURNING id)
            SELECT count(*)::bigint, pg_notify(\(Self.channel), ''), pg_notify(\(OutboundStore.channel), '') FROM requeued
            """,
            logger: logger
        )
        for try await (count, _, _) in rows.decode((Int64, String?, String?).self) { return Int(count) }
        return 0
    }

    private func countRows(_ query: PostgresQuery, logger: Logger) async throws -> Int {
        let rows = try await postgres.query(query, logger: logger)
        var count = 0
        for try await _ in rows { count += 1 }
        return count
    }
}

extension Duration {
    /// Whole and fractional seconds, for SQL intervals and rates.
    public var seconds: Double {
        let (whole, attoseconds) = components
        return Double(whole) + Double(attoseconds) / 1e18
    }
}
