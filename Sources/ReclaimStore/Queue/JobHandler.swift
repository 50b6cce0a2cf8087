import Logging
import PostgresNIO

/// Runs one kind of job. `handle` gets the connection of the transaction that will also mark the
/// job completed: its effects and the completion commit together or not at all.
///
/// Throwing rolls the job's effects back and schedules a retry (or dead-letters it after
/// `maxAttempts`). A handler must not commit, roll back or leave the transaction.
public protocol JobHandler: Sendable {
    func handle(_ job: Job, connection: PostgresConnection, logger: Logger) async throws

    /// Runs consecutive jobs of this kind from one batch, in order, in the same transaction. The default runs
    /// `handle` for each; a handler overrides it to share work across the batch (one query instead of one per job).
    func handle(batch jobs: [Job], connection: PostgresConnection, logger: Logger) async throws
}

extension JobHandler {
    public func handle(batch jobs: [Job], connection: PostgresConnection, logger: Logger) async throws {
        for job in jobs { try await handle(job, connection: connection, logger: logger) }
    }
}
