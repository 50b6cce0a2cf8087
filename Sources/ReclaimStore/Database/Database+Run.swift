import Logging
import PostgresNIO

extension Database {
    /// Runs `body` with a database whose connection pool runs for exactly as long as the body.
    ///
    /// For command-line tools and tests; a server runs its client as a `Service` in its group instead.
    public static func withDatabase<Result: Sendable>(
        _ url: DatabaseURL,
        maxConnections: Int = 10,
        deadlines: Deadlines = .commandLine,
        preparedStatements: PreparedStatements = .named,
        logger: Logger,
        _ body: @Sendable (Database) async throws -> Result
    ) async throws -> Result {
        // A pool retries connections without end; one direct attempt first turns a wrong address, database or
        // password into an error within seconds.
        try await url.checkConnection(logger: logger)
        // The body may lease a connection before run() is scheduled; PostgresNIO warns about that race, harmlessly.
        var backgroundLogger = logger
        backgroundLogger.logLevel = max(logger.logLevel, .error)
        let database = Database(
            url: url,
            maxConnections: maxConnections,
            deadlines: deadlines,
            preparedStatements: preparedStatements,
            backgroundLogger: backgroundLogger
        )
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await database.client.run() }
            defer { group.cancelAll() }
            return try await body(database)
        }
    }
}
