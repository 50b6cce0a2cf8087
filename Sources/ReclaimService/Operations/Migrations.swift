import Logging
import PostgresNIO
import ReclaimStore

/// `reclaim migrate`: connects, applies the schema, disconnects.
public enum Migrations {
    public static func run(_ url: DatabaseURL, logger: Logger) async throws -> Migrator.Outcome {
        try await Database.withDatabase(url, maxConnections: 2, logger: logger) { client in
            try await Migrator().migrate(client: client, logger: logger)
        }
    }
}
