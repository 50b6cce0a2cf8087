import Logging
import PostgresNIO

extension PostgresClient {
    /// Runs `body` with a client whose connection pool runs for exactly as long as the body.
    ///
    /// For command-line tools and tests; a server runs its client as a `Service` in its group instead.
    public static func withClient<Result: Sendable>(
        _ url: DatabaseURL,
        maxConnections: Int = 10,
        logger: Logger,
        _ body: @Sendable (PostgresClient) async throws -> Result
    ) async throws -> Result {
        // A pool retries connections without end; one direct attempt first turns a wrong address, database or
        // password into an error within seconds.
        try await url.checkConnection(logger: logger)
        // The body may lease a connection before run() is scheduled; PostgresNIO warns about that race, harmlessly.
        var backgroundLogger = logger
        backgroundLogger.logLevel = max(logger.logLevel, .error)
        let client = PostgresClient(configuration: url.clientConfiguration(maxConnections: maxConnections), backgroundLogger: backgroundLogger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            return try await body(client)
        }
    }
}

extension PostgresClient {
    /// `withTransaction`, but an error thrown by `body` reaches the caller as itself rather than
    /// wrapped in `PostgresTransactionError` (when BEGIN and ROLLBACK went fine), so callers can
    /// tell their own errors from the database's.
    public func transaction<Result>(
        logger: Logger,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (PostgresConnection) async throws -> sending Result
    ) async throws -> sending Result {
        do {
            return try await withTransaction(logger: logger, isolation: isolation, body)
        } catch let error as PostgresTransactionError {
            if let closureError = error.closureError, error.beginError == nil, error.commitError == nil, error.rollbackError == nil {
                throw closureError
            }
            throw error
        }
    }
}
