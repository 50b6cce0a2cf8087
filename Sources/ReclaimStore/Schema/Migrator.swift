import Crypto
import Foundation
import Logging
import PostgresNIO

/// Applies `schema.sql` to an empty database, or the upgrade scripts of `migrations/` to an older
/// one: idempotent, version-tracked, and safe when several processes start at once.
///
/// Everything happens in one transaction that first takes a transaction-scoped advisory lock,
/// so concurrent migrators queue behind each other, and the second finds the version recorded
/// by the first and does nothing. A failure rolls the whole schema back.
public struct Migrator: Sendable {
    /// Advisory lock key shared by every Reclaim migrator ("reclaim" in ASCII).
    public static let advisoryLockKey: Int64 = 0x72_65_63_6C_61_69_6D

    /// What a migration run did.
    public enum Outcome: Equatable, Sendable {
        case applied(version: Int)
        case alreadyCurrent(version: Int)
    }

    public struct MigrationError: Error, CustomStringConvertible {
        public let description: String
    }

    /// The schema version `schema.sql` declares (`-- reclaim-schema-version: N`).
    public static let targetVersion: Int = {
        for line in SchemaSQL.text.split(separator: "\n") {
            if let range = line.range(of: "reclaim-schema-version:") {
                if let version = Int(line[range.upperBound...].trimmingCharacters(in: .whitespaces)) { return version }
            }
        }
        preconditionFailure("schema.sql declares no reclaim-schema-version")
    }()

    /// SHA-256 of a script's text, recorded with each version so an operator can tell which script
    /// (`schema.sql` or an upgrade) brought the database there.
    public static func checksum(_ script: String) -> String {
        SHA256.hash(data: Data(script.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    private let script: String
    private let version: Int
    private let upgrades: [Int: String]

    /// - Parameters:
    ///   - script: the whole schema at `version`, for an empty database.
    ///   - upgrades: by version N, the script that takes a database from N-1 to N.
    public init(script: String = SchemaSQL.text, version: Int = Migrator.targetVersion, upgrades: [Int: String] = SchemaSQL.upgrades) {
        self.script = script
        self.version = version
        self.upgrades = upgrades
    }

    /// Brings the database to this version: the whole schema when it has none, the upgrade
    /// scripts in order when it is older, nothing when it is current. All or nothing.
    @discardableResult
    public func migrate(client: Database, logger: Logger) async throws -> Outcome {
        let (version, script, upgrades) = (self.version, self.script, self.upgrades)
        return try await client.transaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.advisoryLockKey))", logger: logger)
            try await connection.query("CREATE SCHEMA IF NOT EXISTS reclaim", logger: logger)
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS reclaim.schema_migrations (
                    version integer PRIMARY KEY, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())
                """,
                logger: logger
            )
            try await connection.query(
                "COMMENT ON TABLE reclaim.schema_migrations IS 'Schema versions applied by reclaim migrate.'",
                logger: logger
            )
            let current = try await Self.currentVersion(connection: connection, logger: logger)
            if let current, current == version {
                return .alreadyCurrent(version: current)
            }
            if let current, current > version {
                // An older binary must not pretend the schema is fine: its queries may not fit it.
                throw MigrationError(
                    description: "database is at schema version \(current), newer than this binary's \(version); run a newer reclaim"
                )
            }
            // Each step is a script and the version it leaves the database at.
            var steps: [(version: Int, script: String, name: String)] = []
            if let current {
                for next in (current + 1)...version {
                    guard let upgrade = upgrades[next] else {
                        throw MigrationError(description: "database is at schema version \(current); no upgrade script takes it to \(next)")
                    }
                    steps.append((next, upgrade, "migrations/\(String(format: "%03d", next))"))
                }
            } else {
                steps.append((version, script, "schema.sql"))
            }
            for step in steps {
                for (number, statement) in SQLScript.statements(step.script).enumerated() {
                    do {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                    } catch let error as PSQLError {
                        let message = error.serverInfo?[.message] ?? "\(error.code)"
                        throw MigrationError(description: "\(step.name) statement \(number + 1) failed: \(message)\n\(statement.prefix(200))")
                    }
                }
                try await connection.query(
                    "INSERT INTO reclaim.schema_migrations (version, checksum) VALUES (\(step.version), \(Self.checksum(step.script)))",
                    logger: logger
                )
            }
            logger.info("applied schema", metadata: ["version": "\(version)"])
            return .applied(version: version)
        }
    }

    /// The newest applied version, or `nil` for a database that was never migrated.
    public static func currentVersion(client: Database, logger: Logger) async throws -> Int? {
        try await client.withConnection(logger: logger) { try await currentVersion(connection: $0, logger: logger) }
    }

    static func currentVersion(connection: PostgresConnection, logger: Logger) async throws -> Int? {
        let exists = try await connection.query("SELECT to_regclass('reclaim.schema_migrations') IS NOT NULL", logger: logger)
        for try await flag in exists.decode(Bool.self) where !flag { return nil }
        let rows = try await connection.query("SELECT max(version) FROM reclaim.schema_migrations", logger: logger)
        for try await version in rows.decode(Int?.self) { return version }
        return nil
    }
}
