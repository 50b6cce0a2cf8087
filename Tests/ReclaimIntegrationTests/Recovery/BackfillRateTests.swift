import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import PostgresNIO
import ReclaimDev
import ReclaimDomain
import ReclaimStore
import ReclaimTestSupport
import Synchronization
import Testing

@testable import ReclaimService

/// Issue 49: `reclaim backfill` and every other call to Apple at Apple's pace, against ``AppleAPIStandIn`` enforcing
/// Apple's Sandbox limits (10% of Production's: 5 a second for Get All Subscription Statuses and Get Notification
/// History) with 429 and `Retry-After`.
@Suite("Talking to Apple at Apple's pace: the shared rate budget and reclaim backfill", .poolWatchdog)
struct BackfillRateTests {
    let logger = TestPostgres.logger
    typealias Setup = RecoveryTests.Setup

    /// `count` subscribers Apple knows (status 2, expired), from `first` on, signed by `ca`. Two signatures each take
    /// milliseconds in a debug build: the loop yields after each subscriber, so that tests signing side by side do
    /// not hold both of the pool's threads (the pool watchdog saw a 5 s stall when they did not).
    static func subscribers(_ count: Int, from first: Int, ca: TestCertificateAuthority, into standIn: AppleAPIStandIn) async throws -> [String] {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        var ids: [String] = []
        for index in 0..<count {
            let otid = "\(first + index)"
            let transaction: [String: Any] = [
                "originalTransactionId": otid, "transactionId": otid, "bundleId": "com.example.app", "productId": "com.example.monthly",
                "environment": "Sandbox", "signedDate": now, "type": "Auto-Renewable Subscription", "expiresDate": now - 86_400_000,
            ]
            let renewal: [String: Any] = [
                "originalTransactionId": otid, "productId": "com.example.monthly", "autoRenewProductId": "com.example.monthly",
                "autoRenewStatus": 0, "environment": "Sandbox", "signedDate": now, "expirationIntent": 1,
            ]
            let fixture = AppStoreStatusFixture(
                environment: "Sandbox",
                bundleId: "com.example.app",
                status: 2,
                originalTransactionId: otid,
                signedTransactionInfo: try ca.sign(json: transaction),
                signedRenewalInfo: try ca.sign(json: renewal)
            )
            standIn.statuses.withLock { $0[otid] = fixture }
            ids.append(otid)
            await Task.yield()
        }
        return ids
    }

    func withStandIn(_ standIn: AppleAPIStandIn, _ body: @Sendable (Int) async throws -> Void) async throws {
        let app = Application(router: standIn.router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in try await body(try #require(client.port)) }
    }

    @Test("two backfills and the periodic reconciliation at once stay within Apple's limit together: no 429, no second over it")
    func sharedBudget() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let standIn = setup.standIn(limits: ["getAllSubscriptionStatuses": 5, "getNotificationHistory": 5], latency: .milliseconds(50))
        let ids = try await Self.subscribers(40, from: 6_000_000_000_000_000, ca: setup.ca, into: standIn)
        // 100 notifications in Apple's history: five pages for the reconciliation to read at the same time.
        let base = Date().addingTimeInterval(-3600)
        var made: [(signedPayload: String, signedDate: Int64)] = []
        for index in 0..<100 {
            let signedDate = base.addingTimeInterval(Double(index))
            let body = try setup.notifications.body(uuid: UUID(), originalTransactionId: "\(7_000_000_000_000_000 + index)", signedDate: signedDate)
            let payload = try #require(try JSONSerialization.jsonObject(with: body) as? [String: String])["signedPayload"]
            made.append((signedPayload: try #require(payload), signedDate: Int64(signedDate.timeIntervalSince1970 * 1000)))
            await Task.yield()
        }
        let history = made
        standIn.history.withLock { $0 = history }
        try await withStandIn(standIn) { port in
            try await withTestDatabase { client, url in
                let config = try setup.config(port: port)
                // Stored before: the reconciliation reads them all and finds nothing missed (the counter of missed
                // notifications is the process's, and another suite measures it).
                let ingest = NotificationIngest(dependencies: try Dependencies.test(postgres: client, config: config))
                for item in history {
                    _ = try await ingest.ingest(signedPayload: item.signedPayload)
                    await Task.yield()
                }
                let started = ContinuousClock.now
                async let first = Backfill.run(
                    config: config,
                    url: url,
                    app: "com.example.app",
                    transactionIds: Array(ids.prefix(20)),
                    logger: logger
                ) {
                    _ in
                }
                async let second = Backfill.run(
                    config: config,
                    url: url,
                    app: "com.example.app",
                    transactionIds: Array(ids.suffix(20)),
                    logger: logger
                ) {
                    _ in
                }
                async let reconciled: Void = {
                    let dependencies = try Dependencies.test(postgres: client, config: config)
                    let periodic = PeriodicReconciliation(dependencies: dependencies, interval: .seconds(3600), lookBack: 7200)
                    let http = HTTPClient(eventLoopGroupProvider: .singleton)
                    do {
                        try await periodic.runIfDue(try Reconciler.targets(config, app: nil, environment: nil), http: http)
                    } catch {
                        try? await http.shutdown()
                        throw error
                    }
                    try await http.shutdown()
                }()
                let (a, b, _) = try await (first, second, reconciled)
                let elapsed = ContinuousClock.now - started
                #expect(a.seeded + b.seeded == 40 && a.failed + b.failed == 0)
                #expect(a.rateLimited + b.rateLimited == 0)
                let statuses = standIn.received.filter { $0.path.hasPrefix("/inApps/v1/subscriptions/") }
                #expect(statuses.filter(\.limited).isEmpty, "the stand-in refused \(statuses.filter(\.limited).count) status requests")
                #expect(standIn.busiestSecond("/inApps/v1/subscriptions/") <= 5)
                #expect(standIn.busiestSecond("/inApps/v1/notifications/history") <= 5)
                #expect(standIn.received.filter(\.limited).isEmpty)
                #expect(try await firstInt(client, "SELECT count(*) FROM reclaim.reconciliation_runs WHERE error IS NULL AND found = 100") == 1)
                // Paced, not merely lucky: 40 requests at 4 of Sandbox's 5 a second cannot take under (40 - 1) / 4 s.
                #expect(elapsed >= .seconds(39.0 / 4 - 0.5), "40 requests in \(elapsed): faster than the budget allows")
            }
        }
    }

    @Test("a 429 pauses the endpoint for every caller until its Retry-After, then the run completes; the summary counts it")
    func pauseOn429() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let standIn = setup.standIn(failures: [3: .rateLimited(retryAfter: .milliseconds(1500))])
        let ids = try await Self.subscribers(12, from: 6_100_000_000_000_000, ca: setup.ca, into: standIn)
        try await withStandIn(standIn) { port in
            try await withTestDatabase { _, url in
                let counts = try await Backfill.run(
                    config: try setup.config(port: port),
                    url: url,
                    app: "com.example.app",
                    transactionIds: ids,
                    logger: logger
                ) {
                    _ in
                }
                #expect(counts.seeded == 12 && counts.rateLimited == 1)
                let received = standIn.received
                let limitedAt = try #require(received.dropFirst(2).first).at
                let next = try #require(received.dropFirst(3).first).at
                // Apple's Retry-After is a whole millisecond: allow one of rounding.
                #expect(next - limitedAt >= .milliseconds(1499), "a request went \(next - limitedAt) after the 429, before its Retry-After")
            }
        }
    }

    @Test("a 401 stops the run at once, naming the key; ids not sent are left for the next run")
    func unauthorizedStops() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let standIn = setup.standIn(failures: [1: .unauthorized])
        let ids = try await Self.subscribers(10, from: 6_200_000_000_000_000, ca: setup.ca, into: standIn)
        try await withStandIn(standIn) { port in
            try await withTestDatabase { client, url in
                let error = await #expect(throws: AppStoreAPIError.self) {
                    try await Backfill.run(
                        config: try setup.config(port: port),
                        url: url,
                        app: "com.example.app",
                        transactionIds: ids,
                        logger: logger
                    ) { _ in }
                }
                let message = error.map { "\($0)" } ?? ""
                let status = error?.status
                #expect(status == 401)
                #expect(message.contains("APIKEY0001") && message.contains("refused the credentials"), "\(message)")
                let recorded = try await firstInt(client, "SELECT count(*) FROM reclaim.backfill_transactions")
                #expect(recorded == 0, "the run went on after the 401")
                #expect(standIn.received.count == 1, "\(standIn.received.count) requests: the run went on after the 401")
            }
        }
    }

    @Test(
        "ids that are not transaction ids and answers that fail verification are recorded with their reason; the run goes on; a rerun retries only the failures"
    )
    func recordedFailures() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let standIn = setup.standIn()
        let good = try await Self.subscribers(5, from: 6_300_000_000_000_000, ca: setup.ca, into: standIn)
        // One answer signed by a CA the config does not trust.
        let forged = try await Self.subscribers(1, from: 6_300_000_000_000_100, ca: try TestCertificateAuthority(), into: standIn)
        let ids = good + forged + ["abc", "12x4", String(repeating: "9", count: 65)]
        try await withStandIn(standIn) { port in
            try await withTestDatabase { client, url in
                let config = try setup.config(port: port)
                let counts = try await Backfill.run(config: config, url: url, app: "com.example.app", transactionIds: ids, logger: logger) { _ in }
                #expect(counts.seeded == 5 && counts.invalid == 3 && counts.failed == 1 && counts.total == 9)
                #expect(counts.failures.keys.allSatisfy { $0.hasPrefix("verification") }, "\(counts.failures)")
                let reasons = try await client.query(
                    "SELECT result, count(*)::int, bool_and(reason IS NOT NULL) FROM reclaim.backfill_transactions WHERE result <> 'seeded' GROUP BY 1 ORDER BY 1",
                    logger: logger
                )
                var rows: [String] = []
                for try await (result, count, reasoned) in reasons.decode((String, Int, Bool).self) { rows.append("\(result) \(count) \(reasoned)") }
                #expect(rows == ["failed 1 true", "invalid 3 true"])
                let asked = standIn.received.count
                let again = try await Backfill.run(config: config, url: url, app: "com.example.app", transactionIds: ids, logger: logger) { _ in }
                #expect(again.skipped == 8 && again.failed == 1)
                #expect(standIn.received.count == asked + 1, "the rerun asked Apple for the failed id alone")
            }
        }
    }

    @Test("reclaim backfill killed with kill -9 halfway and run again: each subscription stored once, N/M and ETA printed, a summary at the end")
    func killedAndResumed() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let standIn = setup.standIn(limits: ["getAllSubscriptionStatuses": 5], latency: .milliseconds(120))
        let ids = try await Self.subscribers(30, from: 6_400_000_000_000_000, ca: setup.ca, into: standIn)
        try await withStandIn(standIn) { port in
            try await withTestDatabase { client, url in
                let configFile = setup.directory.appendingPathComponent("config.yaml").path
                try setup.yaml(port: port).write(toFile: configFile, atomically: true, encoding: .utf8)
                let idsFile = setup.directory.appendingPathComponent("ids.txt").path
                try ids.joined(separator: "\n").write(toFile: idsFile, atomically: true, encoding: .utf8)
                let output = setup.directory.appendingPathComponent("first.out").path
                let arguments = ["backfill", "--transactions", idsFile, "--app", "com.example.app", "--environment", "Sandbox"]
                var environment = ProcessInfo.processInfo.environment
                environment["RECLAIM_CONFIG"] = configFile
                environment["DATABASE_URL"] = url.connectionString
                let first = try Subprocess(try Binaries.path("reclaim"), arguments, environment: environment, output: output)
                try await eventually("ten ids done", timeout: .seconds(60)) {
                    try await firstInt(client, "SELECT count(*) FROM reclaim.backfill_transactions") ?? 0 >= 10
                }
                first.signal(SIGKILL)
                _ = await first.exitStatus()
                let before = try await firstInt(client, "SELECT count(*) FROM reclaim.backfill_transactions") ?? 0
                #expect(before < 30, "the run ended before it was killed")
                let rerun = try await Subprocess.run(try Binaries.path("reclaim"), arguments, environment: environment)
                #expect(rerun.status == 0, "\(rerun.errors)")
                #expect(try await firstInt(client, "SELECT count(*) FROM reclaim.backfill_transactions WHERE result = 'seeded'") == 30)
                #expect(try await firstInt(client, "SELECT count(*) FROM reclaim.subscriptions") == 30)
                #expect(try await firstInt(client, "SELECT count(DISTINCT original_transaction_id) FROM reclaim.subscriptions") == 30)
                // Progress without a terminal: N/M, the rate and an ETA; then the summary.
                let printed = (try String(contentsOfFile: output, encoding: .utf8)) + rerun.output
                #expect(printed.contains("/30 ids"), "\(printed)")
                #expect(printed.contains("ETA"), "\(printed)")
                #expect(rerun.output.contains("backfill: 30 ids: \(30 - before) seeded"), "\(rerun.output)")
                #expect(rerun.output.contains("\(before) done before"), "\(rerun.output)")
                // Each id asked once, but for the few in flight when the first run was killed.
                let asked = standIn.received.filter { $0.path.hasPrefix("/inApps/v1/subscriptions/") && !$0.limited }.count
                #expect(asked >= 30 && asked <= 30 + 10, "asked \(asked) times for 30 ids")
                #expect(standIn.received.filter(\.limited).isEmpty)
            }
        }
    }

}
