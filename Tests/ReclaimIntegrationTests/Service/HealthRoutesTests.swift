import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Metrics
import PostgresNIO
import Prometheus
import ReclaimService
import ReclaimStore
import Testing

@Suite("Health, readiness and metrics routes")
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
            let app = Application(router: buildRouter(try .test(postgres: client)))
            try await app.test(.router) { http in
                try await http.execute(uri: "/readyz", method: .get) { response in
                    #expect(response.status == .serviceUnavailable)
                    #expect(response.headers[.contentType] == "application/problem+json")
                    #expect(String(buffer: response.body).contains("urn:reclaim:problem:not-ready"))
                    #expect(String(buffer: response.body).contains("run reclaim migrate"))
                }
            }
        }
        // A database a newer binary migrated: this one is not ready, and says migrating will not help.
        try await withTestDatabase { client, _ in
            try await client.query(
                "INSERT INTO reclaim.schema_migrations (version, checksum) VALUES (\(Migrator.targetVersion + 1), 'newer')",
                logger: TestPostgres.logger
            )
            let app = Application(router: buildRouter(try .test(postgres: client)))
            try await app.test(.router) { http in
                try await http.execute(uri: "/readyz", method: .get) { response in
                    #expect(response.status == .serviceUnavailable)
                    #expect(String(buffer: response.body).contains("run a newer reclaim"))
                }
            }
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
