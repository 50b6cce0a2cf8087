import AsyncHTTPClient
import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import PostgresNIO
import ReclaimDomain
import ReclaimStore
import ReclaimTestSupport
import SwiftASN1
import Synchronization
import Testing

@testable import ReclaimService

/// Recovery through the App Store Server API, against ``AppleAPIStandIn`` on loopback.
@Suite("reclaim reconcile, backfill and apple test-notification against a stand-in of Apple's API", .poolWatchdog)
struct RecoveryTests {
    let logger = TestPostgres.logger

    /// A config for com.example.app (Sandbox) trusting a test CA, with a retention campaign and `serverAPI`
    /// pointing at the stand-in.
    struct Setup {
        let directory: URL
        let ca: TestCertificateAuthority
        let apiKey: SigningKey
        let notifications: TestNotifications

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("reclaim-recovery-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            ca = try TestCertificateAuthority()
            apiKey = SigningKey.generate(keyId: "APIKEY0001")
            notifications = TestNotifications(ca: ca)
            try ca.root.serializeAsPEM().pemString.write(to: directory.appendingPathComponent("root.pem"), atomically: true, encoding: .utf8)
            try apiKey.pkcs8PEM.write(to: directory.appendingPathComponent("api.p8"), atomically: true, encoding: .utf8)
            try SigningKey.generate(keyId: "OFFERKEY01").pkcs8PEM.write(
                to: directory.appendingPathComponent("offer.p8"),
                atomically: true,
                encoding: .utf8
            )
        }

        func standIn(failures: [Int: AppleAPIStandIn.Failure] = [:], limits: [String: Int] = [:], latency: Duration = .zero) -> AppleAPIStandIn {
            AppleAPIStandIn(
                keyId: "APIKEY0001",
                issuerId: "99999999-2222-3333-4444-555555555555",
                bundleId: "com.example.app",
                publicKey: apiKey.publicKey,
                failures: failures,
                limits: limits,
                latency: latency
            )
        }

        func config(port: Int) throws -> ReclaimConfig { try ReclaimConfig.parse(yaml: yaml(port: port)) }

        /// The config's text, for a `reclaim` child process.
        func yaml(port: Int) -> String {
            """
            apps:
              - bundleId: com.example.app
                appAppleId: 1234567890
                environments: [Sandbox]
                issuerId: 11111111-2222-3333-4444-555555555555
                signingKeys: [{keyId: OFFERKEY01, file: \(directory.path)/offer.p8}]
                rootCertificates: [\(directory.path)/root.pem]
                serverAPI: {keyId: APIKEY0001, issuerId: 99999999-2222-3333-4444-555555555555, file: \(directory.path)/api.p8, baseURL: "http://127.0.0.1:\(port)"}
            campaigns:
              - id: retain
                app: com.example.app
                trigger: DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED
                offer: {productId: com.example.monthly, offerIdentifier: RETAIN50}
                cooldown: 90d
            """
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    /// Runs `body` with the stand-in listening on loopback.
    func withStandIn(_ standIn: AppleAPIStandIn, _ body: @Sendable (Int) async throws -> Void) async throws {
        let app = Application(router: standIn.router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in try await body(try #require(client.port)) }
    }

    @Test(
        "after an outage, every notification Apple sent is ingested exactly once and its campaign fires once; a cut connection and a 429 are retried"
    )
    func outage() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        // 50 subscribers turned auto-renew off in the last hour. Reclaim got the first 10; then it was down.
        let base = Date().addingTimeInterval(-3600)
        var sent: [(uuid: UUID, body: Data, signedDate: Int64)] = []
        for index in 0..<50 {
            let uuid = UUID()
            let signedDate = base.addingTimeInterval(Double(index))
            let body = try setup.notifications.body(
                uuid: uuid,
                originalTransactionId: "\(4_000_000_000_000_000 + index)",
                appAccountToken: UUID(),
                signedDate: signedDate
            )
            sent.append((uuid, body, Int64(signedDate.timeIntervalSince1970 * 1000)))
        }
        let alreadyReceived = sent.prefix(10).map(\.body)
        // Request 2 (page 2) loses its connection mid-answer; request 3 (its retry) gets 429 with Retry-After.
        let standIn = setup.standIn(failures: [2: .cutMidAnswer, 3: .rateLimited(retryAfter: .milliseconds(700))])
        let history = sent
        standIn.history.withLock { stored in
            for item in history {
                let payload = try! JSONDecoder().decode([String: String].self, from: item.body)["signedPayload"]!
                stored.append((payload, item.signedDate))
            }
        }
        try await withStandIn(standIn) { port in
            try await withTestDatabase { client, url in
                let config = try setup.config(port: port)
                let dependencies = try Dependencies.test(postgres: client, config: config)
                try await processNotifications(alreadyReceived, client: client, dependencies: dependencies)
                // What alert ReclaimNotificationsMissed watches: notifications Apple's history had and Reclaim did not.
                let missed = {
                    TestMetrics.counterValue(
                        "reclaim_reconciliation_missed_total",
                        dimensions: [("app", "com.example.app"), ("environment", "Sandbox")]
                    )
                }
                let missedBefore = missed()

                let outcomes = try await RecoveryTasks.reconcile(
                    config: config,
                    url: url,
                    app: nil,
                    environment: nil,
                    since: 72 * 3600,
                    onlyFailures: false,
                    logger: logger
                ) { _ in }
                #expect(outcomes.map(\.counts) == [.init(pages: 3, found: 50, new: 40, refused: 0)])
                #expect(missed() - missedBefore == 40)
                #expect(standIn.refusedTokens.isEmpty, "the stand-in refused a bearer token: \(standIn.refusedTokens)")
                let requests = standIn.received
                #expect(requests.count == 5, "page 1, page 2 cut, page 2 rate-limited, page 2, page 3")
                #expect(requests[3].at - requests[2].at >= .milliseconds(600), "Retry-After (UNIX milliseconds) was not honoured")

                try await processNotifications([], client: client, dependencies: dependencies)
                #expect(try await firstInt(client, "SELECT count(*) FROM reclaim.notifications") == 50)
                #expect(try await firstInt(client, "SELECT count(*) FROM reclaim.offers") == 50)
                #expect(try await decisionCounts(client) == ["retain/offered": 50])
                let run = try await firstInt(
                    client,
                    "SELECT count(*) FROM reclaim.reconciliation_runs WHERE pages = 3 AND found = 50 AND new = 40 AND finished_at IS NOT NULL AND error IS NULL AND started_by = 'command'"
                )
                #expect(run == 1)

                // Again: everything is a duplicate; nothing is queued, nobody gets a second offer.
                let again = try await RecoveryTasks.reconcile(
                    config: config,
                    url: url,
                    app: "com.example.app",
                    environment: "Sandbox",
                    since: 72 * 3600,
                    onlyFailures: false,
                    logger: logger
                ) { _ in }
                #expect(again.map(\.counts) == [.init(pages: 3, found: 50, new: 0, refused: 0)])
                #expect(missed() - missedBefore == 40, "duplicates are not missed notifications")
                try await processNotifications([], client: client, dependencies: dependencies)
                #expect(try await firstInt(client, "SELECT count(*) FROM reclaim.offers") == 50)
                #expect(try await firstInt(client, "SELECT count(*) FROM reclaim.jobs") == 50)
            }
        }
    }

    @Test("401 fails at once with what to check; a wrong environment is refused before any request")
    func unauthorized() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let standIn = setup.standIn(failures: [1: .unauthorized])
        try await withStandIn(standIn) { port in
            try await withTestDatabase { _, url in
                let config = try setup.config(port: port)
                let error = await #expect(throws: AppStoreAPIError.self) {
                    _ = try await RecoveryTasks.reconcile(
                        config: config,
                        url: url,
                        app: nil,
                        environment: nil,
                        since: 3600,
                        onlyFailures: false,
                        logger: logger
                    ) { _ in }
                }
                #expect(error?.status == 401)
                #expect(error?.description.contains("serverAPI.keyId") == true, "\(String(describing: error))")
                #expect(standIn.received.count == 1, "401 is not retried")
                #expect(throws: ConfigError.self) {
                    _ = try Reconciler.targets(config, app: nil, environment: "Production")
                }
            }
        }
    }

    @Test("two workers due at once: one reconciles (advisory lock), and the next check waits for the interval")
    func periodic() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let standIn = setup.standIn()
        try await withStandIn(standIn) { port in
            try await withTestDatabase { client, _ in
                let dependencies = try Dependencies.test(postgres: client, config: try setup.config(port: port))
                let targets = try Reconciler.targets(dependencies.config, app: nil, environment: nil)
                let service = PeriodicReconciliation(dependencies: dependencies, interval: .seconds(3600), lookBack: 72 * 3600)
                let http = HTTPClient.shared
                async let first: Void = service.runIfDue(targets, http: http)
                async let second: Void = service.runIfDue(targets, http: http)
                _ = try await (first, second)
                try await service.runIfDue(targets, http: http)
                #expect(try await firstInt(client, "SELECT count(*) FROM reclaim.reconciliation_runs WHERE started_by = 'worker'") == 1)
            }
        }
    }

    @Test("backfill seeds verified state without offers, skips what it did on a second run, and reports ids Apple does not know")
    func backfill() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let standIn = setup.standIn()
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        for (index, status) in [1, 2, 3].enumerated() {
            let otid = "\(5_000_000_000_000_000 + index)"
            let transaction: [String: Any] = [
                "originalTransactionId": otid, "transactionId": otid, "bundleId": "com.example.app", "productId": "com.example.monthly",
                "environment": "Sandbox", "signedDate": now, "type": "Auto-Renewable Subscription", "expiresDate": now + 86_400_000,
                "appAccountToken": UUID().uuidString.lowercased(),
            ]
            let renewal: [String: Any] = [
                "originalTransactionId": otid, "productId": "com.example.monthly", "autoRenewProductId": "com.example.monthly",
                "autoRenewStatus": status == 1 ? 1 : 0, "environment": "Sandbox", "signedDate": now,
            ]
            let fixture = AppStoreStatusFixture(
                environment: "Sandbox",
                bundleId: "com.example.app",
                status: status,
                originalTransactionId: otid,
                signedTransactionInfo: try setup.ca.sign(json: transaction),
                signedRenewalInfo: try setup.ca.sign(json: renewal)
            )
            standIn.statuses.withLock { $0[otid] = fixture }
        }
        try await withStandIn(standIn) { port in
            try await withTestDatabase { client, url in
                let config = try setup.config(port: port)
                let ids = ["5000000000000000", "5000000000000001", "5000000000000002", "5999999999999999"]
                // Interrupted after two ids, then run on the whole file.
                let partial = try await Backfill.run(
                    config: config,
                    url: url,
                    app: "com.example.app",
                    transactionIds: Array(ids.prefix(2)),
                    logger: logger
                ) { _ in }
                #expect(partial.seeded == 2)
                let counts = try await Backfill.run(config: config, url: url, app: "com.example.app", transactionIds: ids, logger: logger) { _ in }
                #expect(counts.seeded == 1 && counts.skipped == 2 && counts.notFound == 1 && counts.subscriptions == 1 && counts.failed == 0)
                let statuses = try await client.query(
                    "SELECT original_transaction_id, status FROM reclaim.subscriptions ORDER BY 1",
                    logger: logger
                )
                var seen: [String] = []
                for try await (otid, status) in statuses.decode((String, String).self) { seen.append("\(otid) \(status)") }
                #expect(seen == ["5000000000000000 active", "5000000000000001 expired", "5000000000000002 billing_retry"])
                #expect(try await firstInt(client, "SELECT count(*) FROM reclaim.campaign_decisions") == 0)
                #expect(try await firstInt(client, "SELECT count(*) FROM reclaim.backfill_transactions") == 4)
                // Each id was asked for once: the second run asked only for the two it had not done.
                #expect(standIn.received.filter { $0.path.hasPrefix("/inApps/v1/subscriptions/") }.count == 4)
            }
        }
    }

    @Test("backfill --evaluate: the campaigns see the notification a status implies, once; Apple's notification views leave it out")
    func backfillEvaluate() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let standIn = setup.standIn()
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        // An active subscriber with auto-renew off (implies AUTO_RENEW_DISABLED: the retain campaign), and one who renews.
        for (otid, autoRenew) in [("6000000000000000", 0), ("6000000000000001", 1)] {
            let transaction: [String: Any] = [
                "originalTransactionId": otid, "transactionId": otid, "bundleId": "com.example.app", "productId": "com.example.monthly",
                "environment": "Sandbox", "signedDate": now, "type": "Auto-Renewable Subscription", "expiresDate": now + 86_400_000,
                "appAccountToken": UUID().uuidString.lowercased(),
            ]
            let renewal: [String: Any] = [
                "originalTransactionId": otid, "productId": "com.example.monthly", "autoRenewProductId": "com.example.monthly",
                "autoRenewStatus": autoRenew, "environment": "Sandbox", "signedDate": now,
            ]
            standIn.statuses.withLock {
                $0[otid] = AppStoreStatusFixture(
                    environment: "Sandbox",
                    bundleId: "com.example.app",
                    status: 1,
                    originalTransactionId: otid,
                    signedTransactionInfo: try! setup.ca.sign(json: transaction),
                    signedRenewalInfo: try! setup.ca.sign(json: renewal)
                )
            }
        }
        try await withStandIn(standIn) { port in
            try await withTestDatabase { client, url in
                let config = try setup.config(port: port)
                let ids = ["6000000000000000", "6000000000000001"]
                let counts = try await Backfill.run(
                    config: config,
                    url: url,
                    app: "com.example.app",
                    transactionIds: ids,
                    evaluate: true,
                    logger: logger
                ) { _ in }
                #expect(counts.seeded == 2 && counts.skipped == 0 && counts.notFound == 0 && counts.subscriptions == 2 && counts.failed == 0)
                #expect(try await decisionCounts(client) == ["retain/offered": 1])
                #expect(try await firstInt(client, "SELECT count(*) FROM reclaim.offers WHERE original_transaction_id = '6000000000000000'") == 1)
                #expect(
                    try await firstInt(
                        client,
                        "SELECT count(*) FROM reclaim.notifications WHERE source = 'backfill' AND notification_type = 'DID_CHANGE_RENEWAL_STATUS' AND subtype = 'AUTO_RENEW_DISABLED'"
                    ) == 1
                )
                #expect(
                    try await firstInt(client, "SELECT count(*) FROM reclaim.notifications_daily") == 0,
                    "a backfilled status is not a notification from Apple"
                )
                // The file again, and the same answer under a forgotten progress record: nothing is offered twice.
                _ = try await Backfill.run(config: config, url: url, app: "com.example.app", transactionIds: ids, evaluate: true, logger: logger) {
                    _ in
                }
                try await client.query("DELETE FROM reclaim.backfill_transactions", logger: logger)
                _ = try await Backfill.run(config: config, url: url, app: "com.example.app", transactionIds: ids, evaluate: true, logger: logger) {
                    _ in
                }
                #expect(try await decisionCounts(client) == ["retain/offered": 1])
                #expect(try await firstInt(client, "SELECT count(*) FROM reclaim.offers") == 1)
            }
        }
    }

    @Test("test-notification polls Apple's status, waits for a relayed TEST notification to arrive, and says when it never does")
    func testNotification() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let standIn = setup.standIn()
        let uuid = UUID()
        let body = try setup.notifications.body(uuid: uuid, type: "TEST", subtype: nil)
        let signedPayload = try JSONDecoder().decode([String: String].self, from: body)["signedPayload"]!
        standIn.testNotification.withLock { $0 = (signedPayload, "SUCCESS") }
        try await withStandIn(standIn) { port in
            try await withTestDatabase { client, url in
                let config = try setup.config(port: port)
                let lines = LineCollector()
                // Not yet received: Apple says SUCCESS, but this database never saw it.
                let missed = try await RecoveryTasks.testNotification(
                    config: config,
                    url: url,
                    app: "com.example.app",
                    environment: nil,
                    poll: .milliseconds(50),
                    arrivalWait: .milliseconds(500),
                    logger: logger
                ) { lines.append($0) }
                #expect(!missed)
                #expect(lines.all.contains { $0.contains("did not reach this Reclaim's database within") }, "\(lines.all)")
                // Relayed: Apple delivered it to the team's receiver, which passes it on a few seconds later. Before, the
                // command looked once and said it never arrived.
                let relay = Task {
                    // Relayed once Apple reported its delivery and the command found nothing stored: it must wait.
                    try await eventually("the command waits for the relay", timeout: .seconds(120), every: .milliseconds(20)) {
                        lines.all.contains { $0.contains("waiting up to 60.0 seconds") }
                    }
                    try await processNotifications([body], client: client, dependencies: try Dependencies.test(postgres: client, config: config))
                }
                let reached = try await RecoveryTasks.testNotification(
                    config: config,
                    url: url,
                    app: "com.example.app",
                    environment: nil,
                    poll: .milliseconds(50),
                    logger: logger
                ) { lines.append($0) }
                try await relay.value
                #expect(reached)
                #expect(lines.all.contains { $0.contains("reached Reclaim: notification \(uuid.uuidString.lowercased())") }, "\(lines.all)")
            }
        }
    }

    @Test(
        "campaigns check looks each configured message up in Get Message List: APPROVED passes; PENDING, REJECTED or unknown fail, naming the campaign"
    )
    func messagesChecked() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let approved = "6f1c0a52-8a0e-4c4e-9d55-0b8f4f0f6a11"
        let pending = "6f1c0a52-8a0e-4c4e-9d55-0b8f4f0f6a12"
        let standIn = setup.standIn()
        standIn.messages.withLock { $0 = [approved: "APPROVED", pending: "PENDING"] }
        try await withStandIn(standIn) { port in
            func config(_ switchMessage: String) throws -> ReclaimConfig {
                try ReclaimConfig.parse(
                    yaml: """
                        apps:
                          - bundleId: com.example.app
                            appAppleId: 1234567890
                            environments: [Sandbox]
                            issuerId: 11111111-2222-3333-4444-555555555555
                            signingKeys: [{keyId: OFFERKEY01, file: \(setup.directory.path)/offer.p8}]
                            rootCertificates: [\(setup.directory.path)/root.pem]
                            serverAPI: {keyId: APIKEY0001, issuerId: 99999999-2222-3333-4444-555555555555, file: \(setup.directory.path)/api.p8, baseURL: "http://127.0.0.1:\(port)"}
                        campaigns:
                          - id: cancel-sheet
                            app: com.example.app
                            trigger: RETENTION_MESSAGING
                            variants:
                              - {id: remind, message: \(approved)}
                              - {id: yearly, switchTo: {productId: com.example.yearly}, messageIdentifier: \(switchMessage)}
                        """
                )
            }
            let fine = try await CampaignTasks.check(try config(approved))
            #expect(fine.contains("messages of com.example.app: 1 identifier(s) APPROVED at Apple"), "\(fine)")
            for (message, says) in [(pending, "is PENDING at Apple"), ("6f1c0a52-8a0e-4c4e-9d55-0b8f4f0f6a19", "is not among the app's messages")] {
                do {
                    _ = try await CampaignTasks.check(try config(message))
                    Issue.record("accepted \(message)")
                } catch {
                    #expect("\(error)".contains("campaign cancel-sheet variant yearly: message \(message) \(says)"), "\(error)")
                }
            }
            #expect(standIn.received.filter { $0.path == "/inApps/v1/messaging/message/list" }.count == 3)
        }
    }
}
