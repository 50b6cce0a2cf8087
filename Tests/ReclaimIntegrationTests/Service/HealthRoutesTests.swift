import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Metrics
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
                try await http.execute(uri: "/readyz", method: .get) { #expect($0.status == .ok) }
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
