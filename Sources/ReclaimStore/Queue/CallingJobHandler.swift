import Logging
import PostgresNIO

/// A job that waits on another service (Apple's App Store Server API): it runs on lanes of its own, one job at a
/// time, its call made with no transaction open and no connection held. So a slow or unreachable service holds up
/// no other job, and one job's failure never runs another's call again (a batch's rollback would).
///
/// The pool claims the job, awaits ``call(_:database:logger:)``, then runs what it returns in the transaction that
/// marks the job completed. A crash between the call and that commit runs the job again: a call must be safe to
/// repeat, the same request with the same body.
public protocol CallingJobHandler: JobHandler {
    /// Makes the job's call. `lease` says whether this lane still holds the job: a call confirms it just before it
    /// sends (``CallLease/confirm(database:logger:)``), so that one job is sent by one lane, and does not wait for
    /// its turn past ``CallLease/budget``.
    func call(_ job: Job, lease: CallLease, database: Database, logger: Logger) async throws -> CallRecord
}

/// A call lane's hold on its job: the worker that claimed it and the attempt it runs.
public struct CallLease: Sendable {
    public let job: Job
    public let worker: String
    /// How long the call may take, pacing waits and retries included: the lease, less a margin for the completion.
    public let budget: Duration

    public init(job: Job, worker: String, budget: Duration) {
        self.job = job
        self.worker = worker
        self.budget = budget
    }

    /// The lane no longer holds the job (another lane claimed it since): the call must not be made.
    public struct Lost: Error, CustomStringConvertible {
        public let job: Int64
        public var description: String { "job \(job) is no longer this lane's: its call is not made" }
    }

    /// Throws ``Lost`` unless this lane still holds the job: running, claimed by this worker for this attempt, its
    /// lease not run out. One round trip, made right before the call.
    public func confirm(database: Database, logger: Logger) async throws {
        let rows = try await database.query(
            """
            SELECT count(*)::int FROM reclaim.jobs
            WHERE id = \(job.id) AND attempts = \(Int32(clamping: job.attempt)) AND state = 'running' AND locked_by = \(worker)
              AND lease_expires_at > now()
            """,
            logger: logger
        )
        var held = false
        for try await count in rows.decode(Int.self) { held = count == 1 }
        if !held { throw Lost(job: job.id) }
    }
}

/// What a call's outcome writes, in the transaction that completes its job; nil: nothing but the completion.
public typealias CallRecord = (@Sendable (PostgresConnection, Logger) async throws -> Void)?

/// Thrown by a call to be tried again after `delay` rather than after the queue's backoff (Apple's 401 while a key is
/// rotated: every 10 minutes).
public struct RetryLater: Error, CustomStringConvertible {
    public let delay: Duration
    public let reason: String

    public init(after delay: Duration, _ reason: String) {
        self.delay = delay
        self.reason = reason
    }

    public var description: String { reason }
}

/// A calling job handed to a transaction: the pool's wiring sent it to the wrong lane.
public struct CallInsideTransaction: Error, CustomStringConvertible {
    public let kind: String
    public var description: String { "a \(kind) job calls another service and runs only on the worker pool's call lanes, outside any transaction" }
}

extension CallingJobHandler {
    /// Never inside a transaction, where the call would hold the batch's connection and a rollback would repeat it.
    public func handle(_ job: Job, connection: PostgresConnection, logger: Logger) async throws {
        throw CallInsideTransaction(kind: job.kind)
    }
}
