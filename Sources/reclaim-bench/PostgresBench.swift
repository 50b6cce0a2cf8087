import Foundation
import Logging
import PostgresNIO
import ReclaimStore

/// A private PostgreSQL for benchmarks, with production durability (fsync and synchronous_commit on).
enum PostgresBench {
    static func start(root: String) throws {
        var logger = Logger(label: "bench-postgres")
        logger.logLevel = .warning
        let cluster = EmbeddedPostgres(root: URL(fileURLWithPath: root), serverSettings: ["max_connections": "200", "shared_buffers": "256MB"])
        try cluster.initializeIfNeeded(logger: logger)
        try cluster.start(logger: logger)
        print(try cluster.url(database: "postgres").connectionString)
    }

    static func stop(root: String) throws {
        try EmbeddedPostgres(root: URL(fileURLWithPath: root)).stop()
    }
}

extension PostgresBench {
    /// Runs `body` with a freshly created, migrated database on `server`, dropped afterwards.
    static func withMigratedDatabase(
        on server: DatabaseURL,
        prefix: String,
        logger: Logger,
        _ body: (DatabaseURL) async throws -> Void
    ) async throws {
        let url = server.with(database: "\(prefix)_\(getpid())")
        try await PostgresClient.withClient(server, maxConnections: 1, logger: logger) { client in
            try await client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(url.database)"), logger: logger)
        }
        try await PostgresClient.withClient(url, maxConnections: 2, logger: logger) { client in
            try await Migrator().migrate(client: client, logger: logger)
        }
        try await body(url)
        try await PostgresClient.withClient(server, maxConnections: 1, logger: logger) { client in
            try await client.query(PostgresQuery(unsafeSQL: "DROP DATABASE \(url.database) WITH (FORCE)"), logger: logger)
        }
    }
}
