import Foundation
import Hummingbird
import HummingbirdTesting
import PostgresNIO
import ReclaimDev
import ReclaimDomain
import ReclaimStore
import ReclaimTestSupport
import Synchronization
import Testing

@testable import ReclaimService

/// Issue 75: a base imported in one pass to Apple. The import keeps Apple's answers; previews and decisions read them
/// and the stored state, never Apple; a retention campaign bounded by `expiresWithin` defers a cancellation whose
/// period ends in 11 months instead of offering now.
@Suite("Importing in one pass: Apple asked once per id, previews and decisions from the import, expiresWithin defers", .poolWatchdog)
struct BackfillOnePassTests {
    let logger = TestPostgres.logger
    typealias Setup = RecoveryTests.Setup

    static let soon = "7300000000000001"  // auto-renew off, its period ends in 5 days
    static let later = "7300000000000002"  // auto-renew off, its period ends in 330 days
    static let lapsed = "7300000000000003"  // expired by choice 5 days ago
    static let ids = [soon, later, lapsed]

    static func config(_ setup: Setup, port: Int, lapsedWithin: String = "30d") throws -> ReclaimConfig {
        try ReclaimConfig.parse(
            yaml: """
                apps:
                  - bundleId: com.example.app
                    appAppleId: 1234567890
                    environments: [Production]
                    issuerId: 11111111-2222-3333-4444-555555555555
                    signingKeys: [{keyId: OFFERKEY01, file: \(setup.directory.path)/offer.p8}]
                    rootCertificates: [\(setup.directory.path)/root.pem]
                    serverAPI: {keyId: APIKEY0001, issuerId: 99999999-2222-3333-4444-555555555555, file: \(setup.directory.path)/api.p8, baseURL: "http://127.0.0.1:\(port)"}
                campaigns:
                  - id: retain
                    app: com.example.app
                    trigger: DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED
                    offer: {productId: com.example.monthly, offerIdentifier: RETAIN50}
                    conditions: {expiresWithin: 14d}
                  - id: winback
                    app: com.example.app
                    trigger: EXPIRED
                    offer: {productId: com.example.monthly, offerIdentifier: WINBACK50}
                    conditions: {lapsedWithin: \(lapsedWithin)}
                """
        )
    }

    static func base(_ setup: Setup, into standIn: AppleAPIStandIn) throws {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let day: Int64 = 86_400_000
        for (otid, expires, status) in [(soon, now + 5 * day, Int64(1)), (later, now + 330 * day, 1), (lapsed, now - 5 * day, 2)] {
            let transaction: [String: Any] = [
                "originalTransactionId": otid, "transactionId": otid, "bundleId": "com.example.app", "productId": "com.example.monthly",
                "environment": "Production", "signedDate": now, "type": "Auto-Renewable Subscription", "expiresDate": expires,
                "purchaseDate": expires - 30 * day, "originalPurchaseDate": expires - 300 * day, "inAppOwnershipType": "PURCHASED",
            ]
            var renewal: [String: Any] = [
                "originalTransactionId": otid, "productId": "com.example.monthly", "autoRenewProductId": "com.example.monthly",
                "autoRenewStatus": 0, "environment": "Production", "signedDate": now,
            ]
            if status == 2 { renewal["expirationIntent"] = 1 }
            standIn.statuses.withLock {
                $0[otid] = AppStoreStatusFixture(
                    environment: "Production",
                    bundleId: "com.example.app",
                    status: Int(status),
                    originalTransactionId: otid,
                    signedTransactionInfo: try! setup.ca.sign(json: transaction),
                    signedRenewalInfo: try! setup.ca.sign(json: renewal)
                )
            }
        }
    }

    func count(_ client: Database, _ sql: String) async throws -> Int { try await firstInt(client, sql) ?? -1 }

    @Test(
        "import, preview twice with a condition changed, decide: Apple asked once per id; the period ending in 5 days offered now, the one in 330 days deferred to 14 days before its end"
    )
    func importPreviewDecide() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let standIn = setup.standIn()
        try Self.base(setup, into: standIn)
        try await RecoveryTests().withStandIn(standIn) { port in
            try await withTestDatabase { client, url in
                func run(_ config: ReclaimConfig, evaluate: Bool, dryRun: Bool = false, refresh: Bool = false) async throws -> Backfill.Counts {
                    try await Backfill.run(
                        config: config,
                        url: url,
                        app: "com.example.app",
                        transactionIds: Self.ids,
                        evaluate: evaluate,
                        dryRun: dryRun,
                        refresh: refresh,
                        logger: logger
                    ) { _ in }
                }
                func asked() -> Int { standIn.received.filter { $0.path.hasPrefix("/inApps/v1/subscriptions/") }.count }
                let config = try Self.config(setup, port: port)

                // 1. Import: Apple asked once per id, nothing decided.
                let imported = try await run(config, evaluate: false)
                #expect(imported.seeded == 3 && imported.asked == 3, "\(imported)")
                #expect(asked() == 3)
                #expect(try await count(client, "SELECT count(*)::int FROM reclaim.campaign_decisions") == 0)

                // 2. Preview: from the import, Apple not asked; nothing written.
                let notifications = try await count(client, "SELECT count(*)::int FROM reclaim.notifications")
                let preview = try await run(config, evaluate: true, dryRun: true)
                #expect(preview.fromImport == 3 && preview.asked == 0, "\(preview)")
                #expect(asked() == 3, "the preview asked Apple")
                #expect(
                    preview.wouldDecide == [
                        .init(campaign: "retain", variant: "", outcome: "offered", reason: "eligible"): 1,
                        .init(campaign: "retain", variant: "", outcome: "scheduled", reason: "decided when it fires"): 1,
                        .init(campaign: "winback", variant: "", outcome: "offered", reason: "eligible"): 1,
                    ],
                    "\(preview.wouldDecide)"
                )
                #expect(Backfill.dryRunSummary(preview, evaluate: true).contains("Apple was not asked"))
                #expect(try await count(client, "SELECT count(*)::int FROM reclaim.campaign_decisions") == 0)
                #expect(try await count(client, "SELECT count(*)::int FROM reclaim.notifications") == notifications)
                #expect(try await count(client, "SELECT count(*)::int FROM reclaim.jobs WHERE kind = 'campaign-fire'") == 0)

                // 3. A condition changed, previewed again: the lapser is now out; still not asked.
                let narrower = try await run(try Self.config(setup, port: port, lapsedWithin: "1d"), evaluate: true, dryRun: true)
                #expect(
                    narrower.wouldDecide[.init(campaign: "winback", variant: "", outcome: "skipped", reason: "condition not met: lapsedWithin")] == 1,
                    "\(narrower.wouldDecide)"
                )
                #expect(asked() == 3)

                // 4. Decide: from the import; Apple still asked once per id in all.
                let decided = try await run(config, evaluate: true)
                #expect(decided.fromImport == 3 && decided.asked == 0, "\(decided)")
                #expect(asked() == 3, "Apple was asked again")
                var holders: [String] = []
                for try await otid in try await client.query("SELECT original_transaction_id FROM reclaim.offers ORDER BY 1", logger: logger)
                    .decode(String.self)
                {
                    holders.append(otid)
                }
                #expect(holders == [Self.soon, Self.lapsed])
                let deferred = try await count(
                    client,
                    """
                    SELECT count(*)::int FROM reclaim.jobs WHERE kind = 'campaign-fire' AND payload->>'originalTransactionId' = '\(Self.later)'
                      AND abs(extract(epoch FROM run_at - (now() + interval '316 days'))) < 600
                    """
                )
                #expect(deferred == 1, "decided 14 days before the period's end")
                #expect(
                    try await count(client, "SELECT count(*)::int FROM reclaim.campaign_decisions WHERE original_transaction_id = '\(Self.later)'")
                        == 0
                )

                // 5. Run again: decided already, nothing more; --refresh asks Apple again, on purpose.
                let again = try await run(config, evaluate: true)
                #expect(again.skipped == 3 && again.fromImport == 0 && asked() == 3, "\(again)")
                let refreshed = try await run(config, evaluate: false, refresh: true)
                #expect(refreshed.asked == 3 && asked() == 6, "\(refreshed)")
            }
        }
    }

    @Test("a live notification since the import counts: auto-renew turned back on, the imported cancellation decides nothing")
    func liveSinceImport() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let standIn = setup.standIn()
        try Self.base(setup, into: standIn)
        try await RecoveryTests().withStandIn(standIn) { port in
            try await withTestDatabase { client, url in
                let config = try Self.config(setup, port: port)
                _ = try await Backfill.run(config: config, url: url, app: "com.example.app", transactionIds: [Self.soon], logger: logger) { _ in }
                // Since the import, the subscriber turned auto-renew back on.
                try await client.query(
                    "UPDATE reclaim.subscriptions SET auto_renew = true, last_signed_date = now() WHERE original_transaction_id = \(Self.soon)",
                    logger: logger
                )
                var rowsSeen: [String] = []
                for try await (otid, renew) in try await client.query(
                    "SELECT original_transaction_id, auto_renew FROM reclaim.subscriptions",
                    logger: logger
                )
                .decode((String, Bool?).self) {
                    rowsSeen.append("\(otid) \(String(describing: renew))")
                }
                #expect(rowsSeen == ["\(Self.soon) Optional(true)"])
                let decided = try await Backfill.run(
                    config: config,
                    url: url,
                    app: "com.example.app",
                    transactionIds: [Self.soon],
                    evaluate: true,
                    logger: logger
                ) { _ in }
                #expect(decided.fromImport == 1)
                var made: [String] = []
                for try await (campaign, reason) in try await client.query(
                    "SELECT campaign_id, reason FROM reclaim.campaign_decisions",
                    logger: logger
                )
                .decode((String, String).self) {
                    made.append("\(campaign): \(reason)")
                }
                #expect(made.isEmpty, "\(made)")
            }
        }
    }

    @Test("--pace: an import's decisions go out at most N ids a second (three ids at 4 a second take at least half a second)")
    func paced() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let standIn = setup.standIn()
        try Self.base(setup, into: standIn)
        try await RecoveryTests().withStandIn(standIn) { port in
            try await withTestDatabase { client, url in
                let config = try Self.config(setup, port: port)
                _ = try await Backfill.run(config: config, url: url, app: "com.example.app", transactionIds: Self.ids, logger: logger) { _ in }
                let started = ContinuousClock.now
                let decided = try await Backfill.run(
                    config: config,
                    url: url,
                    app: "com.example.app",
                    transactionIds: Self.ids,
                    evaluate: true,
                    pace: 4,
                    logger: logger
                ) { _ in }
                // Slots at 0, 0.25 and 0.5 s: a lower bound only (a slow machine is slower, never faster).
                #expect(ContinuousClock.now - started >= .milliseconds(500), "\(ContinuousClock.now - started)")
                #expect(decided.fromImport == 3)
                #expect(try await count(client, "SELECT count(*)::int FROM reclaim.offers") == 2)
                // A pace of nothing is refused, not turned into a trap.
                for pace in [0, -1, Double.nan] {
                    await #expect(throws: ConfigError.self) {
                        try await Backfill.run(config: config, url: url, app: "com.example.app", transactionIds: Self.ids, pace: pace, logger: logger)
                        { _ in }
                    }
                }
            }
        }
    }

    @Test("campaigns check warns of a campaign an import can fire with no time bound, and of none bounded")
    func checkWarns() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        var config = try Self.config(setup, port: 1)
        #expect(!(try await CampaignTasks.check(config)).contains("no time bound"))
        config.campaigns[0].conditions = CampaignConditions()
        let text = try await CampaignTasks.check(config)
        #expect(text.contains("warning: campaign retain can fire on a base imported") && text.contains("expiresWithin"), "\(text)")
    }
}
