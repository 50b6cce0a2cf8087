import Foundation
import Logging
import PostgresNIO
import ReclaimDev
import ReclaimStore

/// A private PostgreSQL for benchmarks, with production durability (fsync and synchronous_commit on).
enum PostgresBench {
    /// `trackCommitTimestamp`: `scripts/bench e2e` times each notification and each offer by the commit
    /// of the transaction that wrote it (`pg_xact_commit_timestamp(xmin)`), which PostgreSQL records
    /// only with `track_commit_timestamp` on (a few bytes per transaction).
    static func start(root: String, trackCommitTimestamp: Bool = false) async throws {
        var logger = Logger(label: "bench-postgres")
        logger.logLevel = .warning
        var settings = ["max_connections": "200", "shared_buffers": "256MB"]
        if trackCommitTimestamp { settings["track_commit_timestamp"] = "on" }
        let cluster = EmbeddedPostgres(root: URL(fileURLWithPath: root), serverSettings: settings)
        try await cluster.initializeIfNeeded(logger: logger)
        try await cluster.start(logger: logger)
        print(try cluster.url(database: "postgres").connectionString)
    }

    static func stop(root: String) async throws {
        try await EmbeddedPostgres(root: URL(fileURLWithPath: root)).stop()
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
        try await Database.withDatabase(server, maxConnections: 1, logger: logger) { client in
            try await client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(url.database)"), logger: logger)
        }
        try await Database.withDatabase(url, maxConnections: 2, logger: logger) { client in
            try await Migrator().migrate(client: client, logger: logger)
        }
        try await body(url)
        try await Database.withDatabase(server, maxConnections: 1, logger: logger) { client in
            try await client.query(PostgresQuery(unsafeSQL: "DROP DATABASE \(url.database) WITH (FORCE)"), logger: logger)
        }
    }
}
