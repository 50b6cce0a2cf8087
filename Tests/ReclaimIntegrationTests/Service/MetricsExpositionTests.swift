import Foundation
import Hummingbird
import HummingbirdTesting
import Prometheus
import ReclaimService
import ReclaimStore
import ServiceLifecycle
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
import ReclaimTestSupport
#endif

@Suite("/metrics", .poolWatchdog)
struct MetricsExpositionTests {
    @Test("valid Prometheus text (prometheus_client's parser) with request counts and latencies per route and status")
    func exposition() async throws {
        let registry = TestMetrics.registry
        try await withTestDatabase { client, _ in
            var dependencies = try Dependencies.test(postgres: client)
            dependencies.metricsRegistry = registry
            let app = Application(router: buildRouter(dependencies))
            try await app.test(.router) { http in
                try await http.execute(uri: "/healthz", method: .get) { #expect($0.status == .ok) }
                try await http.execute(uri: "/v1/offers?appAccountToken=x", method: .get) { #expect($0.status == .unauthorized) }
                let text = try await http.execute(uri: "/metrics", method: .get) { String(buffer: $0.body) }
                let families = try await Self.parse(text)
                #expect(families.contains("hb_requests"), "\(families.sorted())")
                #expect(families.contains("http_server_request_duration"), "\(families.sorted())")
                #expect(text.contains(#"http_route="/healthz""#))
                #expect(text.contains(#"http_response_status_code="401""#))
            }
        }
    }

    @Test("after the corpus is processed and an offer delivered: ingest, verification time, queue, jobs, decisions, offers per campaign, signatures")
    func reclaimSeries() async throws {
        let registry = TestMetrics.registry  // bootstrapped before any of the metrics below is made
        let setup = try CampaignTestSetup()
        defer { setup.remove() }
        try await withProcessedCorpus(setup) { client, processed in
            let dependencies = {
                var dependencies = processed
                dependencies.metricsRegistry = registry
                return dependencies
            }()
            let appKey = try await TestKeys(client: client).create(scope: .app, bundleId: "GeniusParentingAI", logger: TestPostgres.logger)
            let maintenance = QueueMaintenance(
                queue: JobQueue(postgres: client),
                interval: .milliseconds(50),
                completedRetention: .seconds(86_400),
                logger: TestPostgres.logger
            )
            try await withServices([maintenance]) {
                let app = Application(router: buildRouter(dependencies))
                try await app.test(.router) { http in
                    try await http.execute(
                        uri: "/v1/offers?appAccountToken=00000000-0000-0000-0000-000000000051",
                        method: .get,
                        headers: [.authorization: "Bearer \(appKey)"]
                    ) { #expect($0.status == .ok) }
                    try await eventually("queue gauges published") {
                        try await http.execute(uri: "/metrics", method: .get) { String(buffer: $0.body) }.contains(
                            #"reclaim_jobs{state="completed"}"#
                        )
                    }
                    let text = try await http.execute(uri: "/metrics", method: .get) { String(buffer: $0.body) }
                    _ = try await Self.parse(text)
                    // Buckets that resolve sub-millisecond verifications.
                    #expect(text.contains(#"reclaim_notification_verification_seconds_bucket{le="0.00025"}"#), "\(text)")
                    for series in [
                        #"reclaim_notifications_total{outcome="stored"}"#,
                        "reclaim_notification_verification_seconds_bucket{",
                        "reclaim_jobs_completed_total ",
                        "reclaim_job_batch_duration_seconds_bucket{",
                        "reclaim_jobs_oldest_due_age_seconds ",
                        #"reclaim_campaign_decisions_total{campaign="winback-expired",outcome="offered"}"#,
                        #"reclaim_offers_issued_total{campaign="winback-expired"}"#,
                        #"reclaim_offers_delivered_total{campaign="winback-expired"}"#,
                        #"reclaim_offer_signatures_total{purpose="issue"}"#,
                        "reclaim_offers_withdrawn_total ",
                    ] {
                        #expect(text.contains("\n" + series), "\(series) is missing from /metrics")
                    }
                }
            }
        }
    }

    /// The metric family names prometheus_client's text parser finds; throws when it refuses the text.
    static func parse(_ text: String) async throws -> Set<String> {
        let run = try await runProcess(
            "/usr/bin/env",
            [
                "python3", "-c",
                "import sys; from prometheus_client.parser import text_string_to_metric_families as p; print('\\n'.join(f.name for f in p(sys.stdin.read())))",
            ],
            input: Data(text.utf8)
        )
        guard run.status == 0 else { throw PythonCrossCheck.Failure(description: "prometheus_client refused: \(run.errors)\(run.output)") }
        return Set(run.output.split(separator: "\n").map(String.init))
    }

    @Test("a fresh reclaim serve exposes every counter the dashboards and alerts read at zero, and reclaim_build_info")
    func zeroFromStartUp() async throws {
        let setup = try CampaignTestSetup()
        defer { setup.remove() }
        try await withTestDatabase { _, url in
            let server = try ServerProcess(
                role: "all",
                config: setup.configFile,
                databaseURL: url.connectionString,
                log: setup.directory.appendingPathComponent("serve.log")
            )
            try server.start()
            defer { server.stopInBackground() }
            try await server.waitUntilUp()
            // Nothing has happened yet: no notification, decision, offer or timeout.
            let (data, _) = try await URLSession.shared.boundedData(from: URL(string: "http://127.0.0.1:\(server.port)/metrics")!)
            let text = String(decoding: data, as: UTF8.self)
            for series in [
                #"reclaim_offers_delivered_total{campaign="winback-expired"} 0"#,
                #"reclaim_offers_issued_total{campaign="retain-auto-renew-off"} 0"#,
                #"reclaim_offers_redeemed_total{campaign="winback-expired"} 0"#,
                #"reclaim_offers_expired_total 0"#,
                #"reclaim_offers_withdrawn_total 0"#,
                #"reclaim_campaign_decisions_total{campaign="winback-expired",outcome="held_out"} 0"#,
                #"reclaim_offer_signatures_total{purpose="delivery"} 0"#,
                #"reclaim_database_timeouts_total{operation="transaction"} 0"#,
                #"reclaim_database_connections_lost_total{operation="transaction"} 0"#,
                #"reclaim_notifications_total{outcome="stored"} 0"#,
                #"reclaim_jobs_dead_total 0"#,
                #"reclaim_build_info{version="\#(ReclaimVersion.current)",schema_version="\#(Migrator.targetVersion)"} 1"#,
            ] {
                #expect(text.contains(series), "\(series)\n\(text.prefix(3000))")
            }
            _ = try await Self.parse(text)
        }
    }
}
