import Foundation
import HTTPTypes
import PostgresNIO
import ReclaimDev
import ReclaimDomain
import ReclaimService
import ReclaimStore
import ReclaimTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Issue 47: the one deadline Apple imposes from outside, met as Apple meets it. Over a real socket, with a private
/// cluster stalled (every PostgreSQL process stopped by SIGSTOP: connections stay open and nothing answers, as a
/// server frozen by its machine), the realtime answer is `{}` within the budget plus a small margin, every time; after
/// SIGCONT, normal answers resume. (Run in the load pass, one suite at a time.)
@Suite("Retention Messaging answers within its budget while PostgreSQL is stalled", .poolWatchdog)
struct RetentionDeadlineTests {
    /// The test client's own round trip and the timer's slack, on top of the 300 ms budget.
    static let margin = Duration.milliseconds(200)

    /// The postmaster of `cluster` and every process it started.
    static func processes(of cluster: EmbeddedPostgres) throws -> [pid_t] {
        let lock = cluster.root.appendingPathComponent("data/postmaster.pid")
        let postmaster = try #require(Int32(try String(contentsOf: lock, encoding: .utf8).split(separator: "\n").first ?? ""))
        var children: [pid_t] = []
        for entry in try FileManager.default.contentsOfDirectory(atPath: "/proc") {
            guard let pid = Int32(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8) else { continue }
            // pid (comm) state ppid …: comm may hold spaces, so read after its closing parenthesis.
            let fields = stat[(stat.lastIndex(of: ")") ?? stat.startIndex)...].split(separator: " ")
            if fields.count > 2, Int32(fields[2]) == postmaster { children.append(pid) }
        }
        return [postmaster] + children
    }

    /// A migrated database on a private cluster of its own (the shared one serves every other test).
    static func withStallableDatabase(_ body: @Sendable (EmbeddedPostgres, Database) async throws -> Void) async throws {
        let cluster = try await TestPostgres.makeCluster(name: "stall")
        defer { cluster.stopInBackground() }
        try await Database.withDatabase(try cluster.url(database: "postgres"), maxConnections: 1, logger: TestPostgres.logger) { client in
            try await client.query("CREATE DATABASE reclaim", logger: TestPostgres.logger)
        }
        let url = TestPostgres.patient(try cluster.url(database: "reclaim"))
        try await Database.withDatabase(url, maxConnections: 1, logger: TestPostgres.logger) { client in
            try await Migrator().migrate(client: client, logger: TestPostgres.logger)
        }
        // Deadlines far past the budget: only the budget can answer in time.
        let deadlines = Database.Deadlines(acquire: .seconds(120), query: .seconds(120), transaction: .seconds(120))
        try await Database.withDatabase(url, maxConnections: 10, deadlines: deadlines, logger: TestPostgres.logger) { client in
            try await body(cluster, client)
        }
    }

    @Test(
        "a cancel-sheet campaign and the plain path: {} within 300 ms + 200 ms, 5 times each, while every PostgreSQL process is stopped; normal answers after SIGCONT"
    )
    func stalledDatabase() async throws {
        let ca = try TestCertificateAuthority()
        let campaigns = try CampaignTestSetup(ca: ca, settings: CancelSheetLoadTests.campaign)
        defer { campaigns.remove() }
        // No cancel-sheet campaign: the subscriber's live offer, else the app's default message.
        let plain = try CampaignTestSetup(ca: ca)
        defer { plain.remove() }
        try await Self.withStallableDatabase { cluster, database in
            // The default budget, 300 ms: this test is about it.
            let budget = ReclaimConfig.Server().retentionBudgetMilliseconds
            try await CancelSheetTests.withServer(campaigns, database: database, budgetMilliseconds: budget) { sheet in
                try await CancelSheetTests.withServer(plain, database: database, budgetMilliseconds: budget) { fallback in
                    @Sendable func ask(_ post: @Sendable (String) async throws -> (HTTPResponse.Status, String)) async throws -> (String, Duration) {
                        let start = ContinuousClock.now
                        let body = try CancelSheetLoadTests.request(
                            ca,
                            originalTransactionId: CancelSheetLoadTests.treated,
                            requestIdentifier: UUID().uuidString.lowercased()
                        )
                        let (status, answer) = try await post(body)
                        #expect(status == .ok)
                        return (answer, ContinuousClock.now - start)
                    }
                    // Healthy: the arm and the default message.
                    #expect(try await ask(sheet).0.contains("messageIdentifier"))
                    #expect(try await ask(fallback).0 == #"{"message":{"messageIdentifier":"default-message"}}"#)

                    let stopped = try Self.processes(of: cluster)
                    for pid in stopped { kill(pid, SIGSTOP) }
                    var resumed = false
                    defer { if !resumed { for pid in stopped { kill(pid, SIGCONT) } } }
                    for attempt in 1...10 {
                        // Alternately: the cancel-sheet campaign, then the plain path.
                        let name = attempt % 2 == 1 ? "cancel-sheet campaign" : "plain path"
                        let (answer, took) = attempt % 2 == 1 ? try await ask(sheet) : try await ask(fallback)
                        #expect(answer == "{}", "\(name), attempt \(attempt): \(answer)")
                        #expect(took < .milliseconds(300) + Self.margin, "\(name), attempt \(attempt): answered in \(took)")
                    }
                    for pid in stopped { kill(pid, SIGCONT) }
                    resumed = true
                    try await eventually("the cancel sheet answers again", timeout: .seconds(30), every: .milliseconds(100)) {
                        try await ask(sheet).0.contains("messageIdentifier")
                    }
                    try await eventually("the plain path answers again", timeout: .seconds(30), every: .milliseconds(100)) {
                        try await ask(fallback).0.contains("default-message")
                    }
                }
            }
        }
    }
}
