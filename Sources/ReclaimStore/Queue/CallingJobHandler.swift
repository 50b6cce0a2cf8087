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
    func call(_ job: Job, database: Database, logger: Logger) async throws -> CallRecord
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
