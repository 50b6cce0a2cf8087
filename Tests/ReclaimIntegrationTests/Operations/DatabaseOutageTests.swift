import Foundation
import PostgresNIO
import ReclaimDev
import ReclaimStore
import ReclaimTestSupport
import Testing

/// Issue 28: a PostgreSQL restart, a failover or a connection cut by the network is routine in production; a live
/// `reclaim serve` must come through each without a human, losing nothing and issuing nothing twice.
@Suite("Survive a PostgreSQL restart or a cut connection", .serialized, .poolWatchdog)
struct DatabaseOutageTests {
    let logger = TestPostgres.logger

    /// A durable cluster of its own, migrated, and a running `reclaim serve` on it, through a ``TCPProxy`` when
    /// `proxied`; runs `body`, then checks the guarantees (``DatabaseOutageRun/checkRecovered(_:)``) unless told not
    /// to, and stops everything.
    func withServer(
        _ name: String,
        proxied: Bool = false,
        checkRecovered: Bool = true,
        _ body: (DatabaseOutageRun, EmbeddedPostgres, TCPProxy?) async throws -> Void
    ) async throws {
        let cluster = try await TestPostgres.makeCluster(name: name, durable: true)
        defer { cluster.stopInBackground() }
        let url = try cluster.url(database: "postgres")
        try await Database.withDatabase(url, maxConnections: 1, logger: logger) { try await Migrator().migrate(client: $0, logger: logger) }
        let proxy = proxied ? try TCPProxy(upstreamPort: try cluster.port) : nil
        defer { proxy?.stop() }
        let serverURL =
            proxy.map {
                DatabaseURL(username: url.username, host: "127.0.0.1", port: $0.port, database: "postgres").connectionString + "?sslmode=disable"
            }
            ?? url.connectionString
        let run = try DatabaseOutageRun(serverURL: serverURL, name: name)
        defer { run.setup.remove() }
        try run.server.start()
        defer { run.server.killNineInBackground() }
        try await run.server.waitUntilUp()
        try await body(run, cluster, proxy)
        guard checkRecovered else { return }
        try await Database.withDatabase(url, maxConnections: 2, logger: logger) { client in
            try await run.checkRecovered(client)
        }
    }

    @Test("PostgreSQL stopped and started twice (fast, then immediate) under concurrent posting")
    func restartsUnderLoad() async throws {
        let pgLogger = logger
        try await withServer("restarts") { run, cluster, _ in
            try await run.postAll {
                try await cluster.stop(immediate: false)
                try await Task.sleep(for: .milliseconds(1500))
                try await cluster.start(logger: pgLogger)
                try await Task.sleep(for: .milliseconds(1500))
                try await cluster.stop(immediate: true)
                try await Task.sleep(for: .milliseconds(1500))
                try await cluster.start(logger: pgLogger)
            }
        }
    }

    @Test("every connection open at one moment cut by the network (PostgreSQL neither restarts nor answers)")
    func connectionsCutUnderLoad() async throws {
        try await withServer("cut", proxied: true) { run, _, proxy in
            let proxy = try #require(proxy)
            let cut = Count()
            try await run.postAll { cut.set(proxy.cut()) }
            #expect(cut.value > 0, "the proxy had no open connection to cut")
        }
    }

    @Test("SIGTERM right after every connection is cut, with requests and jobs in flight, stops the process in time")
    func sigtermAfterCut() async throws {
        try await withServer("cut-stop", proxied: true, checkRecovered: false) { run, _, proxy in
            let proxy = try #require(proxy)
            // Posts that keep ingest and the workers busy, and are still in flight when the connections are cut.
            let port = run.server.port
            let bodies = run.bodies
            let posting = Task {
                await withTaskGroup(of: Void.self) { group in
                    for lane in 0..<8 {
                        group.addTask {
                            for index in stride(from: lane, to: bodies.count, by: 8) {
                                if Task.isCancelled { return }
                                _ = await postNotification(bodies[index], port: port, timeout: 30)
                            }
                        }
                    }
                }
            }
            defer { posting.cancel() }
            try await Task.sleep(for: .seconds(1))
            #expect(proxy.cut() > 0)
            try await Task.sleep(for: .milliseconds(500))
            // Before the fix the process waited forever for queries on the cut connections.
            try await run.stopWithinShutdownTimeout()
        }
    }
}
