import Foundation
import Logging
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
