import Foundation
import PostgresNIO
import ReclaimDev
import ReclaimStore
import ReclaimTestSupport
import Testing

@Suite("Migrations on a real PostgreSQL", .poolWatchdog)
struct MigratorTests {
    let logger = TestPostgres.logger

    @Test("migrate applies the schema once; a second run changes nothing")
    func migrateTwice() async throws {
        try await withTestDatabase(migrated: false) { client, _ in
            let before = try await Migrator.currentVersion(client: client, logger: logger)
            let first = try await Migrator().migrate(client: client, logger: logger)
            let second = try await Migrator().migrate(client: client, logger: logger)
            let after = try await Migrator.currentVersion(client: client, logger: logger)
            #expect(before == nil)
            #expect(first == .applied(version: Migrator.targetVersion))
            #expect(second == .alreadyCurrent(version: Migrator.targetVersion))
            #expect(after == Migrator.targetVersion)
        }
    }

    @Test("concurrent migrators on separate connections: exactly one applies, all succeed")
    func concurrentMigrators() async throws {
        try await withTestDatabase(migrated: false) { _, url in
            let outcomes = try await withThrowingTaskGroup(of: Migrator.Outcome.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        try await Database.withDatabase(url, maxConnections: 1, logger: logger) { client in
                            try await Migrator().migrate(client: client, logger: logger)
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == .applied(version: Migrator.targetVersion) }.count == 1)
            #expect(outcomes.filter { $0 == .alreadyCurrent(version: Migrator.targetVersion) }.count == 3)
        }
    }

    /// Columns (type, nullability, TOAST compression), indexes and comments of the reclaim schema.
    static func catalog(_ client: Database) async throws -> String {
        let rows = try await client.query(
            """
            SELECT string_agg(line, E'\n' ORDER BY line) FROM (
                SELECT format('%s.%s %s notnull=%s compression=%s comment=%s', c.relname, a.attname,
                              format_type(a.atttypid, a.atttypmod), a.attnotnull, a.attcompression, col_description(c.oid, a.attnum)) AS line
                FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = 'reclaim' AND a.attnum > 0 AND NOT a.attisdropped
                UNION ALL
                SELECT indexdef FROM pg_indexes WHERE schemaname = 'reclaim'
            ) lines
            """,
            logger: TestPostgres.logger
        )
        for try await text in rows.decode(String.self) { return text }
        return ""
    }

    /// Whether the server was built with `method` for TOAST compression (Debian's is built with lz4).
    func client(_ client: Database, supports method: String) async throws -> Bool {
        let rows = try await client.query(
            "SELECT \(method) = ANY (enumvals) FROM pg_settings WHERE name = 'default_toast_compression'",
            logger: logger
        )
        for try await supported in rows.decode(Bool.self) { return supported }
        return false
    }

    @Test("a database at schema version 1 is upgraded by migrations/ and ends up like a fresh one")
    func upgradeFromVersion1() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let version1 = try String(contentsOf: root.appendingPathComponent("Fixtures/schema/schema-v1.sql"), encoding: .utf8)
        try await withTestDatabase(migrated: false) { upgraded, _ in
            #expect(try await Migrator(script: version1, version: 1, upgrades: [:]).migrate(client: upgraded, logger: logger) == .applied(version: 1))
            #expect(try await Migrator().migrate(client: upgraded, logger: logger) == .applied(version: Migrator.targetVersion))
            #expect(try await Migrator.currentVersion(client: upgraded, logger: logger) == Migrator.targetVersion)
            try await withTestDatabase(migrated: false) { fresh, _ in
                try await Migrator().migrate(client: fresh, logger: logger)
                let expected = try await Self.catalog(fresh)
                let lz4 = try await client(fresh, supports: "lz4")
                #expect(expected.contains("notifications.signed_payload text notnull=t compression=\(lz4 ? "l" : "")"))
                #expect(try await Self.catalog(upgraded) == expected)
            }
        }
    }

    /// The whole `pg_dump --schema-only` of `url`'s database, the migrator's own table aside (it records history, which
    /// an upgrade has and a fresh install does not).
    static func schemaDump(_ url: DatabaseURL) async throws -> String {
        let pgDump = try await EmbeddedPostgres.binDirectory().appendingPathComponent("pg_dump").path
        let run = try await runProcess(
            pgDump,
            [
                "--schema-only", "--no-owner", "--no-privileges", "--exclude-table=reclaim.schema_migrations",
                "--host", url.socketDirectory ?? url.host, "--port", String(url.port), "--username", url.username, url.database,
            ]
        )
        guard run.status == 0 else { throw PythonCrossCheck.Failure(description: "pg_dump failed: \(run.errors)") }
        // pg_dump 15.14 and later fence the dump with \restrict and \unrestrict and a random key: not the schema.
        return run.output.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("\\restrict ") && !$0.hasPrefix("\\unrestrict ") }
            .joined(separator: "\n")
    }

    /// A fixture of `schema.sql` as it was at `version` (Tests/Fixtures/schema/schema-vN.sql).
    static func schemaFixture(_ version: Int) throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return try String(contentsOf: root.appendingPathComponent("Fixtures/schema/schema-v\(version).sql"), encoding: .utf8)
    }

    @Test(
        "installed at schema 1, 13 (deploy-check's upgrade) or 14 (release 1.0.0) and migrated, a database's whole pg_dump --schema-only equals a fresh install's",
        arguments: [1, 13, 14]
    )
    func upgradedDumpEqualsFresh(from version: Int) async throws {
        let old = try Self.schemaFixture(version)
        #expect(old.contains("reclaim-schema-version: \(version)\n"))
        try await withTestDatabase(migrated: false) { upgraded, upgradedURL in
            #expect(
                try await Migrator(script: old, version: version, upgrades: [:]).migrate(client: upgraded, logger: logger)
                    == .applied(version: version)
            )
            #expect(try await Migrator().migrate(client: upgraded, logger: logger) == .applied(version: Migrator.targetVersion))
            try await withTestDatabase(migrated: false) { fresh, freshURL in
                try await Migrator().migrate(client: fresh, logger: logger)
                let expected = try await Self.schemaDump(freshURL)
                #expect(expected.contains("CREATE TABLE reclaim.cancel_sheet_decisions"), "\(expected.prefix(500))")
                let actual = try await Self.schemaDump(upgradedURL)
                if actual != expected {
                    let (a, e) = (
                        actual.split(separator: "\n", omittingEmptySubsequences: false),
                        expected.split(separator: "\n", omittingEmptySubsequences: false)
                    )
                    let first = zip(a, e).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a.count, e.count)
                    Issue.record(
                        "schema \(version) upgraded differs from a fresh install from line \(first + 1): upgraded \"\(first < a.count ? a[first] : "<end>")\", fresh \"\(first < e.count ? e[first] : "<end>")\""
                    )
                }
            }
        }
    }

    @Test("the corpus replay behaves the same on a database installed at schema 1 and upgraded")
    func corpusReplayOnUpgradedDatabase() async throws {
        try await withTestDatabase(migrated: false) { upgraded, _ in
            try await Migrator(script: try Self.schemaFixture(1), version: 1, upgrades: [:]).migrate(client: upgraded, logger: logger)
            try await Migrator().migrate(client: upgraded, logger: logger)
            try await CorpusCampaignTests.replayCorpus(on: upgraded)
        }
    }

    @Test("schema 29: a request recorded twice at version 28 keeps both rows, the later renamed; after it a second record of one request is refused")
    func onePerRequest() async throws {
        try await withTestDatabase(migrated: false) { client, _ in
            let v28 = Migrator(script: try Self.schemaFixture(1), version: 28, upgrades: SchemaSQL.upgrades.filter { $0.key <= 28 })
            _ = try await Migrator(script: try Self.schemaFixture(1), version: 1, upgrades: [:]).migrate(client: client, logger: logger)
            #expect(try await v28.migrate(client: client, logger: logger) == .applied(version: 28))
            func insert(_ id: UUID, at decided: String) -> PostgresQuery {
                """
                INSERT INTO reclaim.cancel_sheet_decisions (id, campaign_id, bundle_id, environment, original_transaction_id,
                    request_identifier, product_id, outcome, shadow, answer, reason, decided_at)
                VALUES (\(id), 'sheet', 'app', 'Sandbox', '1', 'r-1', 'p', 'held_out', false, 'nothing', 'held out',
                    \(decided)::timestamptz)
                """
            }
            let (first, second) = (UUID(), UUID())
            try await client.query(insert(second, at: "2026-11-02T00:00:00Z"), logger: logger)
            try await client.query(insert(first, at: "2026-11-01T00:00:00Z"), logger: logger)
            #expect(try await Migrator().migrate(client: client, logger: logger) == .applied(version: Migrator.targetVersion))
            var identifiers: [UUID: String] = [:]
            for try await (id, request) in try await client.query(
                "SELECT id, request_identifier FROM reclaim.cancel_sheet_decisions",
                logger: logger
            ).decode((UUID, String).self) {
                identifiers[id] = request
            }
            #expect(identifiers == [first: "r-1", second: "r-1 (replayed, record \(second.uuidString.lowercased()))"])
            await #expect(throws: PSQLError.self) { try await client.query(insert(UUID(), at: "2026-11-03T00:00:00Z"), logger: logger) }
        }
    }

    @Test("upgrades run in order; a missing upgrade script fails, names the version and changes nothing")
    func upgradeSteps() async throws {
        try await withTestDatabase(migrated: false) { client, _ in
            try await Migrator(script: "CREATE TABLE reclaim.one (id int)", version: 1, upgrades: [:]).migrate(client: client, logger: logger)
            let gap = Migrator(script: "unused", version: 3, upgrades: [2: "CREATE TABLE reclaim.two (id int)"])
            await #expect { try await gap.migrate(client: client, logger: logger) } throws: { error in
                "\(error)".contains("no upgrade script takes it to 3")
            }
            let rows = try await client.query("SELECT to_regclass('reclaim.two') IS NULL", logger: logger)
            for try await absent in rows.decode(Bool.self) { #expect(absent) }
            #expect(try await Migrator.currentVersion(client: client, logger: logger) == 1)

            let complete = Migrator(
                script: "unused",
                version: 3,
                upgrades: [2: "CREATE TABLE reclaim.two (id int)", 3: "ALTER TABLE reclaim.two ADD COLUMN name text"]
            )
            #expect(try await complete.migrate(client: client, logger: logger) == .applied(version: 3))
            // An older binary refuses a newer database instead of calling it current.
            let older = Migrator(script: "unused", version: 2, upgrades: [:])
            await #expect { try await older.migrate(client: client, logger: logger) } throws: { error in
                "\(error)".contains("newer than this binary's 2")
            }
            let versions = try await client.query("SELECT array_agg(version ORDER BY version) FROM reclaim.schema_migrations", logger: logger)
            for try await applied in versions.decode([Int].self) { #expect(applied == [1, 2, 3]) }
            let columns = try await client.query("SELECT count(*)::int FROM information_schema.columns WHERE table_name = 'two'", logger: logger)
            for try await count in columns.decode(Int.self) { #expect(count == 2) }
        }
    }

    @Test("a failing schema rolls back completely and records no version")
    func failingSchemaRollsBack() async throws {
        try await withTestDatabase(migrated: false) { client, _ in
            let broken = Migrator(script: "CREATE TABLE reclaim.half (id int); SELECT no_such_function();", version: 1)
            await #expect(throws: Migrator.MigrationError.self) { try await broken.migrate(client: client, logger: logger) }
            let rows = try await client.query("SELECT to_regclass('reclaim.half') IS NULL", logger: logger)
            for try await gone in rows.decode(Bool.self) { #expect(gone) }
            #expect(try await Migrator.currentVersion(client: client, logger: logger) == nil)
        }
    }

    @Test("every table, view and column of the reclaim schema carries a comment")
    func everythingCommented() async throws {
        try await withTestDatabase { client, _ in
            let rows = try await client.query(
                """
                SELECT c.relname
                FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = 'reclaim' AND c.relkind IN ('r', 'v') AND obj_description(c.oid, 'pg_class') IS NULL
                UNION ALL
                SELECT c.relname || '.' || a.attname
                FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
                WHERE n.nspname = 'reclaim' AND c.relkind IN ('r', 'v') AND c.relname <> 'schema_migrations'
                  AND col_description(c.oid, a.attnum) IS NULL
                ORDER BY 1
                """,
                logger: logger
            )
            var missing: [String] = []
            for try await name in rows.decode(String.self) { missing.append(name) }
            #expect(missing.isEmpty, "objects without COMMENT ON: \(missing)")
        }
    }

    @Test("SchemaSQL.upgrades holds every script of migrations/, each under its own version (SwiftPM embeds a folder's files but lists none)")
    func upgradesTableCoversMigrations() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let scripts = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("migrations").path).filter {
            $0.hasSuffix(".sql")
        }
        var versions: Set<Int> = []
        for name in scripts {
            let version = try #require(Int(name.prefix(3)), "\(name) does not start with a three-digit version")
            versions.insert(version)
            let text = try String(contentsOf: root.appendingPathComponent("migrations/\(name)"), encoding: .utf8)
            #expect(SchemaSQL.upgrades[version] == text, "migrations/\(name) is not SchemaSQL.upgrades[\(version)]: add it there")
        }
        #expect(Set(SchemaSQL.upgrades.keys) == versions)
        #expect(versions == Set(2...Migrator.targetVersion), "an upgrade for every version after 1 up to schema.sql's")
    }
}
