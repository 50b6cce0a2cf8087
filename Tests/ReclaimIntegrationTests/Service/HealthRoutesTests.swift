import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Metrics
import PostgresNIO
import Prometheus
import ReclaimService
import ReclaimStore
import ReclaimTestSupport
import Testing

@Suite("Health, readiness and metrics routes", .poolWatchdog)
struct HealthRoutesTests {
    @Test("healthz is 200; readyz is 200 on a migrated database and 503 problem+json on an empty one")
    func readiness() async throws {
        try await withTestDatabase { client, _ in
            let app = Application(router: buildRouter(try .test(postgres: client)))
            try await app.test(.router) { http in
                try await http.execute(uri: "/healthz", method: .get) { #expect($0.status == .ok) }
                // /readyz gives the database 2 s; a machine busy with the whole suite may need a second try.
                try await eventually("/readyz answers 200", timeout: .seconds(30), every: .milliseconds(200)) {
                    try await http.execute(uri: "/readyz", method: .get) { $0.status == .ok }
                }
                try await http.execute(uri: "/nope", method: .get) { response in
                    #expect(response.status == .notFound)
                    #expect(response.headers[.contentType] == "application/problem+json")
                }
            }
        }
        try await withTestDatabase(migrated: false) { client, _ in
            let (status, contentType, body) = try await readyz(client)
            #expect(status == .serviceUnavailable)
            #expect(contentType == "application/problem+json")
            #expect(body.contains("urn:reclaim:problem:not-ready"), "\(body)")
            #expect(body.contains("run reclaim migrate"), "\(body)")
        }
        // A database a newer binary migrated: this one is not ready, and says migrating will not help.
        try await withTestDatabase { client, _ in
            try await client.query(
                "INSERT INTO reclaim.schema_migrations (version, checksum) VALUES (\(Migrator.targetVersion + 1), 'newer')",
                logger: TestPostgres.logger
            )
            let (status, _, body) = try await readyz(client)
            #expect(status == .serviceUnavailable)
            #expect(body.contains("run a newer reclaim"), "\(body)")
        }
    }

    /// /readyz's answer, asked again while it is "not reachable": it gives the database 2 s, which a machine busy with
    /// the whole suite sometimes misses (seen 140 s into a full run, and on an empty database in CI).
    @Sendable func readyz(_ client: Database) async throws -> (HTTPResponse.Status, String?, String) {
        let app = Application(router: buildRouter(try .test(postgres: client)))
        return try await app.test(.router) { http in
            var answer: (HTTPResponse.Status, String?, String) = (.serviceUnavailable, nil, "")
            try await eventually("/readyz answers with the schema", timeout: .seconds(30), every: .milliseconds(200)) {
                answer = try await http.execute(uri: "/readyz", method: .get) {
                    ($0.status, $0.headers[.contentType], String(buffer: $0.body))
                }
                return !answer.2.contains("the database is not reachable")
            }
            return answer
        }
    }

    @Test(
        "a rollout: the database one additive step ahead keeps this binary ready (and its migrate a no-op); a step that is not additive does not"
    )
    func readyThroughAdditiveUpgrade() async throws {
        let target = Migrator.targetVersion
        try await withTestDatabase { client, _ in
            let first = try await readyz(client).2
            #expect(first.contains(#""schema":"current""#), "\(first)")
            // What the next release's migrate does: an additive step (a new table), as its script declares.
            var upgrades = SchemaSQL.upgrades
            upgrades[target + 1] = "-- reclaim-additive: yes\nCREATE TABLE reclaim.rollout_test (id integer PRIMARY KEY);\n"
            let next = Migrator(script: SchemaSQL.text, version: target + 1, upgrades: upgrades)
            #expect(try await next.migrate(client: client, logger: TestPostgres.logger) == .applied(version: target + 1))
            let (status, _, body) = try await readyz(client)
            #expect(status == .ok, "\(body)")
            #expect(body.contains(#""schema":"ahead-additive""#) && body.contains(#""databaseSchemaVersion":"\#(target + 1)""#), "\(body)")
            // This version's migrate, run late in the rollout or in a rollback, leaves the newer database alone.
            #expect(try await Migrator().migrate(client: client, logger: TestPostgres.logger) == .aheadCompatible(version: target + 1))
            // A step that is not additive: this binary is no longer ready, and its migrate refuses.
            upgrades[target + 2] = "-- reclaim-additive: no\nALTER TABLE reclaim.rollout_test RENAME TO rollout_renamed;\n"
            let breaking = Migrator(script: SchemaSQL.text, version: target + 2, upgrades: upgrades)
            #expect(try await breaking.migrate(client: client, logger: TestPostgres.logger) == .applied(version: target + 2))
            let (refused, _, problem) = try await readyz(client)
            #expect(refused == .serviceUnavailable && problem.contains("not additive: run a newer reclaim"), "\(problem)")
            await #expect(throws: Migrator.MigrationError.self) { try await Migrator().migrate(client: client, logger: TestPostgres.logger) }
            // The newer binary itself is current.
            #expect(try await Migrator.compatibility(of: target + 2, client: client, logger: TestPostgres.logger) == .current)
            #expect(try await Migrator.compatibility(of: target + 1, client: client, logger: TestPostgres.logger) == .ahead(database: target + 2))
        }
        // A fresh install of a version whose last step was additive serves the binaries of the version before.
        var upgrades = SchemaSQL.upgrades
        upgrades[target + 1] = "-- reclaim-additive: yes\nCREATE TABLE reclaim.rollout_test (id integer PRIMARY KEY);\n"
        let fresh = Migrator(
            script: SchemaSQL.text + "\nCREATE TABLE reclaim.rollout_test (id integer PRIMARY KEY);\n",
            version: target + 1,
            upgrades: upgrades
        )
        try await withTestDatabase(migrated: false) { client, _ in
            try await fresh.migrate(client: client, logger: TestPostgres.logger)
            #expect(try await Migrator.compatibility(client: client, logger: TestPostgres.logger) == .aheadAdditive(database: target + 1))
        }
    }

    @Test("every upgrade script says whether it is additive")
    func upgradesDeclareAdditive() {
        for (version, script) in SchemaSQL.upgrades {
            #expect(Migrator.isAdditive(script) != nil, "migrations/\(version): no `-- reclaim-additive: yes|no` line")
        }
    }

    @Test("healthz answers 503 stalled while a worker lane or ingest transaction makes no progress past its bound, then 200 again")
    func liveness() async throws {
        try await withTestDatabase { client, _ in
            var dependencies = try Dependencies.test(postgres: client)
            // A bound long enough that a busy machine answers the requests between two steps within it.
            dependencies.liveness = Liveness(bound: .seconds(3))
            let liveness = dependencies.liveness
            let app = Application(router: buildRouter(dependencies))
            try await app.test(.router) { http in
                let step = liveness.begin("worker lane")
                try await http.execute(uri: "/healthz", method: .get) { #expect($0.status == .ok) }
                try await Task.sleep(for: .milliseconds(3500))
                try await http.execute(uri: "/healthz", method: .get) { response in
                    #expect(response.status == .serviceUnavailable)
                    #expect(response.headers[.contentType] == "application/problem+json")
                    #expect(String(buffer: response.body).contains("urn:reclaim:problem:stalled"))
                    #expect(String(buffer: response.body).contains("worker lane without progress"))
                }
                // Progress, or the end of the step, makes the process healthy again.
                liveness.progress(step)
                try await http.execute(uri: "/healthz", method: .get) { #expect($0.status == .ok) }
                liveness.end(step)
                try await Task.sleep(for: .milliseconds(3500))
                try await http.execute(uri: "/healthz", method: .get) { #expect($0.status == .ok) }
                // The readiness probe is about the database, not about stalls.
                try await eventually("/readyz answers 200", timeout: .seconds(30), every: .milliseconds(200)) {
                    try await http.execute(uri: "/readyz", method: .get) { $0.status == .ok }
                }
            }
        }
    }

    @Test("metrics serves the Prometheus text of the registry")
    func metrics() async throws {
        try await withTestDatabase { client, _ in
            let dependencies = try Dependencies.test(postgres: client)
            // The path the service's swift-metrics counters take into the registry /metrics serves.
            PrometheusMetricsFactory(registry: dependencies.metricsRegistry).makeCounter(label: "reclaim_test_total", dimensions: [])
                .increment(by: 3)
            let app = Application(router: buildRouter(dependencies))
            try await app.test(.router) { http in
                try await http.execute(uri: "/metrics", method: .get) { response in
                    #expect(response.status == .ok)
                    #expect(String(buffer: response.body).contains("reclaim_test_total 3"))
                }
            }
        }
    }
}
