import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdTesting
import PostgresNIO
import ReclaimStore
import ReclaimTestSupport
import Testing

@testable import ReclaimService

/// Issue 58: the pace and the 429 pause hold for everyone. A 429 pauses the endpoint whatever the caller's own
/// deadline, and the pacer keeps sending at the rate when the database is seconds away.
@Suite("Apple's pace for everyone: every 429 pauses the endpoint, and a far database still gets the rate", .poolWatchdog)
struct ApplePacingTests {
    let logger = TestPostgres.logger
    typealias Setup = RecoveryTests.Setup

    @Test("a 429 whose Retry-After is past the caller's deadline still pauses the endpoint, here and in the database")
    func rateLimitBeyondDeadline() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let standIn = setup.standIn(failures: [1: .rateLimited(retryAfter: .seconds(30))])
        let app = Application(router: standIn.router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { http in
            let port = try #require(http.port)
            try await withTestDatabase { client, _ in
                let config = try setup.config(port: port)
                let pacer = AppleAPIPacer(database: client, logger: logger)
                var apple = try AppStoreServerAPIClient(
                    app: try #require(config.apps.first),
                    environment: "Sandbox",
                    http: HTTPClient.shared,
                    pacer: pacer,
                    logger: logger
                )
                apple.retry.deadline = .seconds(5)
                await #expect(throws: AppStoreAPIError.self) { _ = try await apple.subscriptionStatuses(transactionId: "1") }
                #expect(pacer.rateLimited["getAllSubscriptionStatuses"] == 1)
                let rows = try await client.query(
                    "SELECT extract(epoch FROM paused_until - now())::float8 FROM reclaim.apple_api_pace WHERE endpoint = 'getAllSubscriptionStatuses'",
                    logger: logger
                )
                var paused: [Double] = []
                for try await seconds in rows.decode(Double.self) { paused.append(seconds) }
                #expect(paused.count == 1 && paused.allSatisfy { $0 > 20 }, "paused for \(paused) s in the database")
                // Another caller of this process waits for the pause too: no slot within the next second.
                let lane = pacer.lane(bundleId: "com.example.app", environment: "Sandbox", endpoint: .getAllSubscriptionStatuses, rate: 5)
                let waiter = Task { try await lane.acquire() }
                try await Task.sleep(for: .seconds(1))
                waiter.cancel()
                #expect((try? await waiter.value) == nil, "a slot was handed out during the pause")
                #expect(standIn.received.count == 1, "only the request Apple refused")
            }
        }
    }

    @Test("with the database 2 s away (1 s each way), a lane still starts requests at its rate, and never faster")
    func farDatabase() async throws {
        try await withTestDatabase { _, url in
            let proxy = try TCPProxy(upstreamPort: url.port, delay: .seconds(1))
            defer { proxy.stop() }
            var far = url
            far.host = "127.0.0.1"
            far.port = proxy.port
            far.socketDirectory = nil
            try await Database.withDatabase(far, maxConnections: 2, logger: logger) { database in
                try await database.query("SELECT 1", logger: logger)  // the connection made before the clock starts
                let pacer = AppleAPIPacer(database: database, logger: logger)
                // 20 a second: slots 1/19 s apart (the lane keeps 5% back).
                let lane = pacer.lane(bundleId: "com.example.app", environment: "Production", endpoint: .getAllSubscriptionStatuses, rate: 20)
                // Before, every reserved slot was past when it arrived and the lane never handed one out: a minute is
                // the limit on waiting for sixty.
                let acquired = try await withThrowingTaskGroup(of: [ContinuousClock.Instant]?.self) { group in
                    group.addTask {
                        var starts: [ContinuousClock.Instant] = []
                        for _ in 0..<60 {
                            try await lane.acquire()
                            starts.append(.now)
                        }
                        return starts
                    }
                    group.addTask {
                        try await Task.sleep(for: .seconds(60))
                        return nil
                    }
                    let first = try await group.next() ?? nil
                    group.cancelAll()
                    return first
                }
                let starts = try #require(acquired, "no 60 slots in a minute: the lane starved")
                // After the first reservations (a round trip or two), 50 starts at 19 a second take 50/19 s.
                let steady = starts[59] - starts[9]
                #expect(steady <= .seconds(2 * 50.0 / 19), "50 starts took \(steady)")
                var busiest = 0
                for (index, start) in starts.enumerated() {
                    busiest = max(busiest, starts[index...].prefix { $0 - start < .seconds(1) }.count)
                }
                #expect(busiest <= 20, "\(busiest) starts within one second")
            }
        }
    }
}
