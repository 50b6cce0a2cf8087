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
        /// The database is newer than this binary, by additive steps only: this binary serves it as it is (a
        /// rollback to it, or its `migrate` run late in a rollout, changes nothing).
        case aheadCompatible(version: Int)
    }

    /// How a binary of this schema version stands to the database's (`GET /readyz`).
    public enum Compatibility: Equatable, Sendable {
        /// The version this binary was built for.
        case current
        /// Newer, by steps that only add (tables, columns with defaults, views, indexes): this binary's queries
        /// still fit, so it keeps serving through a rollout and after a rollback.
        case aheadAdditive(database: Int)
        /// Newer by a step that changed or removed something this binary may use: run a newer reclaim.
        case ahead(database: Int)
        /// Older, or never migrated (nil): run `reclaim migrate`.
        case behind(database: Int?)
    }

    /// Whether an upgrade script only adds: its line `-- reclaim-additive: yes` (or `no`). Every script in
    /// migrations/ says it (a test holds them to it); a script that does not counts as not additive.
    ///
    /// Additive means a binary of the previous version keeps working on the upgraded database: new tables, views,
    /// functions and indexes, new columns that are nullable or have a default; no rename, no drop, no new
    /// constraint that the previous binary's writes could break, no trigger that writes what it does not expect.
    public static func isAdditive(_ script: String) -> Bool? {
        for line in script.split(separator: "\n", omittingEmptySubsequences: false) where line.hasPrefix("-- reclaim-additive:") {
            switch line.dropFirst("-- reclaim-additive:".count).trimmingCharacters(in: .whitespaces) {
            case "yes": return true
            case "no": return false
            default: return nil
            }
        }
        return nil
    }

    /// The oldest schema version whose binaries serve a database at `version` made by `schema.sql` or by upgrades:
    /// go down from `version` while each step into it is additive.
    static func oldestCompatible(with version: Int, upgrades: [Int: String]) -> Int {
        var oldest = version
        while oldest > 1, let script = upgrades[oldest], isAdditive(script) == true { oldest -= 1 }
        return oldest
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
            // Added in 1.0.0, on the table the migrator owns: rows written before have neither (read as not additive).
            try await connection.query(
                """
                ALTER TABLE reclaim.schema_migrations ADD COLUMN IF NOT EXISTS additive boolean,
                    ADD COLUMN IF NOT EXISTS oldest_compatible integer
                """,
                logger: logger
            )
            for comment in [
                "COMMENT ON TABLE reclaim.schema_migrations IS 'Schema versions applied by reclaim migrate.'",
                "COMMENT ON COLUMN reclaim.schema_migrations.additive IS 'Whether the step to this version only added (its script says -- reclaim-additive: yes); null for schema.sql and for rows from before 1.0.0.'",
                "COMMENT ON COLUMN reclaim.schema_migrations.oldest_compatible IS 'The oldest schema version whose binaries serve the database at this version (GET /readyz): lower than version when the steps to it were additive.'",
            ] {
                try await connection.query(PostgresQuery(unsafeSQL: comment), logger: logger)
            }
            let current = try await Self.currentVersion(connection: connection, logger: logger)
            if let current, current == version {
                return .alreadyCurrent(version: current)
            }
            if let current, current > version {
                if try await Self.compatibility(of: version, connection: connection, logger: logger) == .aheadAdditive(database: current) {
                    logger.notice(
                        "database is ahead of this binary by additive steps only; nothing to do",
                        metadata: ["database": "\(current)", "binary": "\(version)"]
                    )
                    return .aheadCompatible(version: current)
                }
                // An older binary must not pretend the schema is fine: its queries may not fit it.
                throw MigrationError(
                    description:
                        "database is at schema version \(current), newer than this binary's \(version) by a step that is not additive; run a newer reclaim"
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
            // The oldest version whose binaries serve the database as each step leaves it.
            var oldestCompatible: Int? = nil
            if let current { oldestCompatible = try await Self.oldestCompatible(at: current, connection: connection, logger: logger) }
            for step in steps {
                for (number, statement) in SQLScript.statements(step.script).enumerated() {
                    do {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                    } catch let error as PSQLError {
                        let message = error.serverInfo?[.message] ?? "\(error.code)"
                        throw MigrationError(description: "\(step.name) statement \(number + 1) failed: \(message)\n\(statement.prefix(200))")
                    }
                }
                let additive = current == nil ? nil : Self.isAdditive(step.script) ?? false
                let oldest: Int
                if current == nil {
                    oldest = Self.oldestCompatible(with: step.version, upgrades: upgrades)
                } else {
                    oldest = additive == true ? (oldestCompatible ?? step.version - 1) : step.version
                }
                oldestCompatible = oldest
                try await connection.query(
                    """
                    INSERT INTO reclaim.schema_migrations (version, checksum, additive, oldest_compatible)
                    VALUES (\(step.version), \(Self.checksum(step.script)), \(additive), \(oldest))
                    """,
                    logger: logger
                )
            }
            logger.info("applied schema", metadata: ["version": "\(version)"])
            return .applied(version: version)
        }
    }

    /// How a binary built for schema `version` stands to the database (`GET /readyz`).
    public static func compatibility(of version: Int = targetVersion, client: Database, logger: Logger) async throws -> Compatibility {
        try await client.withConnection(logger: logger) { try await compatibility(of: version, connection: $0, logger: logger) }
    }

    static func compatibility(of version: Int, connection: PostgresConnection, logger: Logger) async throws -> Compatibility {
        guard let (current, oldest) = try await newest(connection: connection, logger: logger) else { return .behind(database: nil) }
        if current == version { return .current }
        if current < version { return .behind(database: current) }
        return oldest <= version ? .aheadAdditive(database: current) : .ahead(database: current)
    }

    /// The newest applied version and the oldest version compatible with it (the version itself for rows from
    /// before 1.0.0, which have no `oldest_compatible`: read through to_jsonb so that one statement fits both), in
    /// two round trips as `/readyz` always took; nil for a database that was never migrated.
    static func newest(connection: PostgresConnection, logger: Logger) async throws -> (version: Int, oldestCompatible: Int)? {
        let exists = try await connection.query("SELECT to_regclass('reclaim.schema_migrations') IS NOT NULL", logger: logger)
        for try await flag in exists.decode(Bool.self) where !flag { return nil }
        let rows = try await connection.query(
            """
            SELECT m.version, (to_jsonb(m) ->> 'oldest_compatible')::integer
            FROM reclaim.schema_migrations m ORDER BY m.version DESC LIMIT 1
            """,
            logger: logger
        )
        for try await (version, oldest) in rows.decode((Int, Int?).self) { return (version, oldest ?? version) }
        return nil
    }

    /// The oldest compatible version recorded with the newest version `version`.
    static func oldestCompatible(at version: Int, connection: PostgresConnection, logger: Logger) async throws -> Int {
        guard let newest = try await newest(connection: connection, logger: logger), newest.version == version else { return version }
        return newest.oldestCompatible
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
