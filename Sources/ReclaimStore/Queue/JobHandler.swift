import Logging
import PostgresNIO

/// Runs one kind of job. `handle` gets the connection of the transaction that will also mark the
/// job completed: its effects and the completion commit together or not at all.
///
/// Throwing rolls the job's effects back and schedules a retry (or dead-letters it after
/// `maxAttempts`). A handler must not commit, roll back or leave the transaction.
public protocol JobHandler: Sendable {
    func handle(_ job: Job, connection: PostgresConnection, logger: Logger) async throws
}

/// A handler made of a closure, for small handlers and tests.
public struct ClosureJobHandler: JobHandler {
    let body: @Sendable (Job, PostgresConnection, Logger) async throws -> Void

    public init(_ body: @escaping @Sendable (Job, PostgresConnection, Logger) async throws -> Void) {
        self.body = body
    }

    public func handle(_ job: Job, connection: PostgresConnection, logger: Logger) async throws {
        try await body(job, connection, logger)
    }
}
