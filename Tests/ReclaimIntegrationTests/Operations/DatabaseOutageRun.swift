import Foundation
import PostgresNIO
import ReclaimStore
import ReclaimTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// One run of issue 28's scenario against a real `reclaim serve` (API and workers in one process): notifications
/// for distinct subscribers posted concurrently, each retried until it is answered 200 (as Apple retries), while
/// the test does something to PostgreSQL; then the guarantees every such run must keep.
struct DatabaseOutageRun {
    static let subscribers = 400
    static let lanes = 8
    /// Short enough that a lost job returns within the test; the heartbeat runs every third of it.
    static let settings = """
        worker:
          lease: 6s
          pollInterval: 1s
          shutdownTimeout: 5s
        """
    static let shutdownTimeout: Duration = .seconds(5)

    let setup: CampaignTestSetup
    let maker: TestNotifications
    let server: ServerProcess
    let bodies: [Data]
    let logger = TestPostgres.logger

    /// - Parameter serverURL: the database as `reclaim serve` reaches it (perhaps through a proxy).
    init(serverURL: String, name: String) throws {
        let ca = try TestCertificateAuthority()
        setup = try CampaignTestSetup(ca: ca, settings: Self.settings)
        let maker = TestNotifications(ca: ca, bundleId: "GeniusParentingAI", environment: "Sandbox", appAppleId: 6_747_332_178)
        self.maker = maker
        bodies = try (0..<Self.subscribers).map { try Self.body(maker, subscriber: $0) }
        server = try ServerProcess(
            role: "all",
            config: setup.configFile,
            databaseURL: serverURL,
            log: setup.directory.appendingPathComponent("\(name).log"),
            logLevel: "info"
        )
    }

    /// AUTO_RENEW_DISABLED for subscriber `index`: the retention campaign offers each one exactly once.
    static func body(_ maker: TestNotifications, subscriber index: Int) throws -> Data {
        try maker.body(
            originalTransactionId: String(3_000_000_000_000_000 + index),
            appAccountToken: UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", index))!
        )
    }

    /// Posts every body from `lanes` concurrent clients, each retried until answered 200; `during` runs once a
    /// quarter of them are acknowledged, while the rest are being posted. Returns when all are acknowledged.
    func postAll(during disruption: @escaping @Sendable () async throws -> Void) async throws {
        let acknowledged = Count()
        let quarter = Self.subscribers / 4
        let port = server.port
        let bodies = bodies
        let lanes = Self.lanes
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await eventually("a quarter acknowledged", timeout: .seconds(60), every: .milliseconds(5)) {
                    acknowledged.value >= quarter
                }
                try await disruption()
            }
            for lane in 0..<lanes {
                group.addTask {
                    for index in stride(from: lane, to: bodies.count, by: lanes) {
                        try await eventually("notification \(index) acknowledged", timeout: .seconds(120), every: .milliseconds(200)) {
                            await postNotification(bodies[index], port: port, timeout: 15) == 200
                        }
                        acknowledged.increment()
                        try await Task.sleep(for: .milliseconds(15))
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    /// The guarantees after the disruption: new notifications answered within seconds, every acknowledged one
    /// stored once, the queue drained with no job left running, one offer per subscriber, and SIGTERM that stops
    /// the process within its shutdown timeout plus a few seconds.
    func checkRecovered(_ client: Database) async throws {
        for index in 0..<5 {
            let body = try Self.body(maker, subscriber: Self.subscribers + index)
            let started = ContinuousClock.now
            var status: Int?
            try await eventually("a new notification is answered 200", timeout: .seconds(30), every: .milliseconds(100)) {
                status = await postNotification(body, port: server.port, timeout: 10)
                return status == 200
            }
            // Answered, and soon: the first attempts after a cut may each spend one deadline on a dead connection.
            let waited = ContinuousClock.now - started
            #expect(waited < .seconds(20), "new notification \(index) took \(waited) to be accepted")
        }
        let total = Self.subscribers + 5
        #expect(try await firstInt(client, "SELECT count(*) FROM reclaim.notifications") == total)
        #expect(try await firstInt(client, "SELECT count(DISTINCT notification_uuid) FROM reclaim.notifications") == total)
        // Within a few leases the queue drains: nothing may stay running under a live heartbeat.
        try await eventually("the queue drained", timeout: .seconds(90), every: .milliseconds(250)) {
            try await firstInt(client, "SELECT count(*) FROM reclaim.jobs WHERE state <> 'completed'") == 0
        }
        #expect(try await firstInt(client, "SELECT count(*) FROM reclaim.jobs") == total)
        #expect(try await firstInt(client, "SELECT count(*) FROM reclaim.offers") == total)
        #expect(
            try await firstInt(client, "SELECT count(DISTINCT (bundle_id, environment, original_transaction_id)) FROM reclaim.offers") == total
        )
        try await stopWithinShutdownTimeout()
    }

    /// SIGTERM, then the process must have exited within `worker.shutdownTimeout` plus five seconds.
    func stopWithinShutdownTimeout() async throws {
        guard let process = server.process, process.isRunning else {
            Issue.record("reclaim serve is not running; log: \(server.logTail())")
            return
        }
        process.signal(SIGTERM)
        let deadline = ContinuousClock.now + Self.shutdownTimeout + .seconds(5)
        while process.isRunning && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        if process.isRunning {
            process.signal(SIGKILL)
            await process.exitStatus()
            Issue.record("reclaim serve still ran \(Self.shutdownTimeout + .seconds(5)) after SIGTERM; log: \(server.logTail())")
        }
    }

}

/// A counter shared by concurrent tasks.
final class Count: Sendable {
    private let count = Atomic(0)
    var value: Int { count.load(ordering: .relaxed) }
    func increment() { count.add(1, ordering: .relaxed) }
    func set(_ value: Int) { count.store(value, ordering: .relaxed) }
}
