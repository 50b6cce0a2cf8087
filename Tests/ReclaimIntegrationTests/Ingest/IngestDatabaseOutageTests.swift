import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import ReclaimDomain
import ReclaimService
import ReclaimStore
import ReclaimTestSupport
import Synchronization
import Testing

@Suite("Ingest while PostgreSQL stops and restarts", .poolWatchdog)
struct IngestDatabaseOutageTests {
    let logger = TestPostgres.logger

    @Test("PostgreSQL stopped mid-run: 503 (Apple retries), never 200 for something not stored; after restart the same posts succeed")
    func outage() async throws {
        let cluster = try await TestPostgres.makeCluster(name: "outage", durable: true)
        let url = try cluster.url(database: "postgres")
        try await Database.withDatabase(url, maxConnections: 1, logger: logger) { try await Migrator().migrate(client: $0, logger: logger) }
        let ca = try TestCertificateAuthority()
        let maker = TestNotifications(ca: ca)
        let config = try ReclaimConfig.parse(yaml: "apps:\n  - bundleId: com.example.app\n    appAppleId: 1234567890\n    environments: [Sandbox]\n")
        let bodies = try (0..<30).map { _ in try maker.body() }
        let acknowledged = Mutex(Set<Int>())
        try await Database.withDatabase(url, maxConnections: 8, logger: logger) { client in
            let verifier = AppleJWSVerifier(trustedRoots: [ca.root])
            let app = Application(router: buildRouter(try .test(postgres: client, config: config, verifier: verifier)))
            try await app.test(.router) { http in
                func post(_ index: Int) async throws -> HTTPResponse.Status {
                    try await http.execute(
                        uri: "/v1/apple/notifications",
                        method: .post,
                        headers: [.contentType: "application/json"],
                        body: ByteBuffer(bytes: bodies[index])
                    ) { $0.status }
                }
                for index in 0..<10 {
                    #expect(try await post(index) == .ok)
                    _ = acknowledged.withLock { $0.insert(index) }
                }
                try await cluster.stop(immediate: true)
                // Each gives up within the commit timeout (a few seconds), so only a handful are posted while down.
                for index in 10..<15 {
                    let status = try await post(index)
                    #expect(status == .serviceUnavailable, "post \(index) while the database is down answered \(status)")
                    if status == .ok { _ = acknowledged.withLock { $0.insert(index) } }
                }
                try await cluster.start(logger: logger)
                // The pool reconnects on its own; Apple's retries then succeed.
                for index in 10..<30 {
                    var status = HTTPResponse.Status.serviceUnavailable
                    try await eventually("post \(index) accepted after restart", timeout: .seconds(30), every: .milliseconds(100)) {
                        status = try await post(index)
                        return status == .ok
                    }
                    _ = acknowledged.withLock { $0.insert(index) }
                }
            }
            let rows = try await client.query("SELECT count(*)::bigint FROM reclaim.notifications", logger: logger)
            for try await stored in rows.decode(Int64.self) {
                #expect(Int(stored) == acknowledged.withLock { $0.count })
                #expect(stored == 30)
            }
        }
        try await cluster.stop()
    }
}
