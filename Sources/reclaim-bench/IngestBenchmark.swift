import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import PostgresNIO
import Prometheus
import ReclaimDomain
import ReclaimService
import ReclaimStore
import ReclaimTestSupport
import ServiceLifecycle
import Synchronization

/// `reclaim-bench ingest`: notifications durably committed per second over HTTP on loopback, with
/// p50/p99 latency, against `reclaim serve`'s router and a real PostgreSQL (durable settings).
/// Bodies are signed in advance by a throw-away CA (each a distinct notificationUUID, three JWS:
/// notification, transaction, renewal info) so the load generator spends no time signing.
enum IngestBenchmark {
    static func run(_ options: BenchOptions) async throws {
        let logger = QueueBenchmark.logger
        let server = try DatabaseURL(try options.string("database-url"))
        let count = options.int("notifications", default: 20_000)
        let connections = options.int("connections", default: 32)
        let port = options.int("port", default: 18_080)
        let ca = try TestCertificateAuthority()
        print("ingest: signing \(count) notifications in advance")
        let bodies = try (0..<count).map { _ in ByteBuffer(bytes: try notificationBody(ca: ca)) }
        let averageBytes = bodies.reduce(0) { $0 + $1.readableBytes } / max(bodies.count, 1)

        let config = try ReclaimConfig.parse(yaml: "apps:\n  - bundleId: com.example.app\n    environments: [Sandbox]\n")
        var figures: [String: Any] = [:]
        try await PostgresBench.withMigratedDatabase(on: server, prefix: "bench_ingest", logger: logger) { url in
            let postgres = PostgresClient(configuration: url.clientConfiguration(maxConnections: 16), backgroundLogger: logger)
            let dependencies = try Dependencies(
                config: config,
                postgres: postgres,
                metricsRegistry: PrometheusCollectorRegistry(),
                logger: logger,
                verifier: AppleJWSVerifier(trustedRoots: [ca.root])
            )
            let app = buildApplication(dependencies, role: .api, host: "127.0.0.1", port: port)
            let group = ServiceGroup(services: [app], logger: logger)
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                try await waitForServer(port: port)
                // Warm-up: the chain cache and connection pools.
                _ = try await load(bodies: Array(bodies.prefix(200)), connections: 8, port: port)
                FileHandle.standardError.write(Data("ingest: posting\n".utf8))  // unbuffered: a profiler can attach now
                let started = ContinuousClock.now
                let latencies = try await load(bodies: Array(bodies.dropFirst(200)), connections: connections, port: port)
                let elapsed = ContinuousClock.now - started
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                let stored = try await storedCount(postgres, logger: logger)
                guard stored == count else { throw BenchError("\(stored) notifications stored, expected \(count)") }
                let perSecond = Double(latencies.count) / seconds
                print("ingest: \(latencies.count) notifications (\(averageBytes) bytes each) over \(connections) connections in \(seconds) s")
                figures = [
                    "per_s": Int(perSecond),
                    "p50_ms": (percentile(latencies, 50) * 100).rounded() / 100,
                    "p99_ms": (percentile(latencies, 99) * 100).rounded() / 100,
                    "connections": connections,
                    "body_bytes": averageBytes,
                ]
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
            }
        }
        printFigures(figures)
    }

    /// Posts every body once over `connections` keep-alive connections; returns sorted latencies in ms.
    static func load(bodies: [ByteBuffer], connections: Int, port: Int) async throws -> [Double] {
        let next = NextIndex()
        return try await withThrowingTaskGroup(of: [Double].self) { group in
            for _ in 0..<connections {
                group.addTask {
                    try await TestClient.withClient(host: "127.0.0.1", port: port) { client in
                        var latencies: [Double] = []
                        while true {
                            let index = next.take()
                            guard index < bodies.count else { return latencies }
                            let started = ContinuousClock.now
                            let response = try await client.post(
                                "/v1/apple/notifications",
                                headers: [.contentType: "application/json"],
                                body: bodies[index]
                            )
                            guard response.status == .ok else {
                                throw BenchError("HTTP \(response.status.code): \(String(buffer: response.body ?? ByteBuffer()))")
                            }
                            let latency = ContinuousClock.now - started
                            latencies.append(Double(latency.components.seconds) * 1000 + Double(latency.components.attoseconds) / 1e15)
                        }
                    }
                }
            }
            var all: [Double] = []
            for try await latencies in group { all += latencies }
            return all.sorted()
        }
    }

    static func waitForServer(port: Int) async throws {
        for _ in 0..<100 {
            if (try? await TestClient.withClient(host: "127.0.0.1", port: port) { try await $0.get("/healthz") }) != nil { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw BenchError("server did not start on port \(port)")
    }

    static func storedCount(_ postgres: PostgresClient, logger: Logger) async throws -> Int {
        let rows = try await postgres.query("SELECT count(*)::bigint FROM reclaim.notifications", logger: logger)
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }

    /// A DID_CHANGE_RENEWAL_STATUS notification with nested transaction and renewal info, all signed by `ca`.
    static func notificationBody(ca: TestCertificateAuthority) throws -> Data {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let originalTransactionId = String(Int64.random(in: 2_000_000_000_000_000..<3_000_000_000_000_000))
        let transaction: [String: Any] = [
            "originalTransactionId": originalTransactionId, "transactionId": originalTransactionId, "bundleId": "com.example.app",
            "productId": "com.example.monthly", "environment": "Sandbox", "signedDate": now, "type": "Auto-Renewable Subscription",
            "appAccountToken": UUID().uuidString.lowercased(), "expiresDate": now + 30 * 86_400_000,
        ]
        let renewal: [String: Any] = [
            "originalTransactionId": originalTransactionId, "autoRenewProductId": "com.example.monthly", "productId": "com.example.monthly",
            "autoRenewStatus": 0, "environment": "Sandbox", "signedDate": now,
        ]
        let payload: [String: Any] = [
            "notificationType": "DID_CHANGE_RENEWAL_STATUS", "subtype": "AUTO_RENEW_DISABLED", "notificationUUID": UUID().uuidString.lowercased(),
            "version": "2.0", "signedDate": now,
            "data": [
                "bundleId": "com.example.app", "environment": "Sandbox", "status": 1,
                "signedTransactionInfo": try ca.sign(json: transaction), "signedRenewalInfo": try ca.sign(json: renewal),
            ],
        ]
        return try JSONSerialization.data(withJSONObject: ["signedPayload": try ca.sign(json: payload)])
    }
}

/// Hands out 0, 1, 2, … to concurrent load-generator connections.
final class NextIndex: Sendable {
    private let value = Mutex(0)

    func take() -> Int {
        value.withLock { value in
            defer { value += 1 }
            return value
        }
    }
}
