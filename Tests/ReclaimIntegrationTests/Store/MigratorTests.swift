import Foundation
import PostgresNIO
import ReclaimStore
import Testing

@Suite("Migrations on a real PostgreSQL")
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
                        try await PostgresClient.withClient(url, maxConnections: 1, logger: logger) { client in
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

    @Test("the embedded schema is schema.sql byte for byte (run scripts/embed-schema after editing it)")
    func embeddedSchemaMatchesFile() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let file = try String(contentsOf: root.appendingPathComponent("schema.sql"), encoding: .utf8)
        #expect(file == SchemaSQL.text + "\n" || file == SchemaSQL.text)
    }
}
