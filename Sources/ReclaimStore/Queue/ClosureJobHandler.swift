import Logging
import PostgresNIO

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
