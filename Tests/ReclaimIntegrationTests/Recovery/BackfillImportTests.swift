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

/// Issue 60: importing an existing base with `reclaim backfill --evaluate`: a dry run that counts before anything is
/// offered, `conditions.lapsedWithin` so that only recent lapsers are offered, Production unless told, and the
/// backfilled decisions reported apart from the live ones.
@Suite("Importing an existing base: lapsedWithin, a dry run first, Production unless told, backfill reported apart", .poolWatchdog)
struct BackfillImportTests {
    let logger = TestPostgres.logger
    typealias Setup = RecoveryTests.Setup

    static let recent = "7100000000000001"
    static let old = "7100000000000002"
    static let unknown = "7199999999999999"

    func config(_ setup: Setup, port: Int) throws -> ReclaimConfig {
        try ReclaimConfig.parse(
            yaml: """
                apps:
                  - bundleId: com.example.app
                    appAppleId: 1234567890
                    environments: [Production, Sandbox]
                    issuerId: 11111111-2222-3333-4444-555555555555
                    signingKeys: [{keyId: OFFERKEY01, file: \(setup.directory.path)/offer.p8}]
                    rootCertificates: [\(setup.directory.path)/root.pem]
                    serverAPI: {keyId: APIKEY0001, issuerId: 99999999-2222-3333-4444-555555555555, file: \(setup.directory.path)/api.p8, baseURL: "http://127.0.0.1:\(port)"}
                campaigns:
                  - id: winback
                    app: com.example.app
                    trigger: EXPIRED
                    offer: {productId: com.example.monthly, offerIdentifier: WINBACK50}
                    conditions: {lapsedWithin: 30d}
                """
        )
    }

    /// Two subscribers Production knows, expired by their own choice 5 and 700 days ago.
    static func lapsers(_ setup: Setup, into standIn: AppleAPIStandIn) throws {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        for (otid, days) in [(recent, Int64(5)), (old, Int64(700))] {
            let expired = now - days * 86_400_000
            let transaction: [String: Any] = [
                "originalTransactionId": otid, "transactionId": otid, "bundleId": "com.example.app", "productId": "com.example.monthly",
                "environment": "Production", "signedDate": now, "type": "Auto-Renewable Subscription", "expiresDate": expired,
                "purchaseDate": expired - 30 * 86_400_000, "originalPurchaseDate": expired - 300 * 86_400_000,
                "appAccountToken": UUID().uuidString.lowercased(),
            ]
            let renewal: [String: Any] = [
                "originalTransactionId": otid, "productId": "com.example.monthly", "autoRenewProductId": "com.example.monthly",
                "autoRenewStatus": 0, "environment": "Production", "signedDate": now, "expirationIntent": 1,
            ]
            let fixture = AppStoreStatusFixture(
                environment: "Production",
                bundleId: "com.example.app",
                status: 2,
                originalTransactionId: otid,
                signedTransactionInfo: try setup.ca.sign(json: transaction),
                signedRenewalInfo: try setup.ca.sign(json: renewal)
            )
            standIn.statuses.withLock { $0[otid] = fixture }
        }
    }

    func rows(_ client: Database, _ table: String) async throws -> Int? { try await firstInt(client, "SELECT count(*) FROM reclaim.\(table)") }

    /// Apple's stand-in knowing ``lapsers(_:into:)``, and a fresh database; `body` gets the stand-in, the config that
    /// points at it and the database.
    func withLapsers(_ body: @Sendable (AppleAPIStandIn, ReclaimConfig, Database, DatabaseURL) async throws -> Void) async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let standIn = setup.standIn()
        try Self.lapsers(setup, into: standIn)
        let app = Application(router: standIn.router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { http in
            let port = try #require(http.port)
            let config = try config(setup, port: port)
            try await withTestDatabase { client, url in try await body(standIn, config, client, url) }
        }
    }

    @Test("a dry run names the campaign and writes nothing; the real run offers to the one who lapsed 5 days ago, not 700; Production only")
    func importBase() async throws {
        try await withLapsers { standIn, config, client, url in
            let ids = [Self.recent, Self.old, Self.unknown]
            let dry = try await Backfill.run(
                config: config,
                url: url,
                app: "com.example.app",
                transactionIds: ids,
                evaluate: true,
                dryRun: true,
                logger: logger
            ) { _ in }
            #expect(dry.seeded == 2 && dry.notFound == 1 && dry.wouldStore == ["expired": 2])
            #expect(
                dry.wouldDecide == [
                    .init(campaign: "winback", variant: "", outcome: "offered", reason: "eligible"): 1,
                    .init(campaign: "winback", variant: "", outcome: "skipped", reason: "condition not met: lapsedWithin"): 1,
                ],
                "\(dry.wouldDecide)"
            )
            let summary = Backfill.dryRunSummary(dry, evaluate: true)
            #expect(summary.contains("campaign winback:") && summary.contains("offer: 1"), "\(summary)")
            #expect(summary.contains("skip, condition not met: lapsedWithin: 1"), "\(summary)")
            for table in ["subscriptions", "campaign_decisions", "offers", "backfill_transactions", "notifications", "jobs"] {
                #expect(try await rows(client, table) == 0, "the dry run wrote to reclaim.\(table)")
            }
            #expect(try await rows(client, "apple_api_pace") == 1, "the dry run shares the rate budget")

            let counts = try await Backfill.run(
                config: config,
                url: url,
                app: "com.example.app",
                transactionIds: ids,
                evaluate: true,
                logger: logger
            ) {
                _ in
            }
            #expect(counts.seeded == 2 && counts.notFound == 1)
            let offered = try await client.query("SELECT original_transaction_id FROM reclaim.offers", logger: logger)
            var holders: [String] = []
            for try await otid in offered.decode(String.self) { holders.append(otid) }
            #expect(holders == [Self.recent])
            // Each id asked once: Production only, the unknown one not asked again of Sandbox.
            let asked = standIn.received.filter { $0.path.hasPrefix("/inApps/v1/subscriptions/") }.map(\.path)
            #expect(asked.filter { $0.hasSuffix(Self.unknown) }.count == 2, "once by the dry run, once by the real run: \(asked)")
            #expect(asked.count == 6, "\(asked)")

            // Reported apart from live decisions.
            let sources = try await client.withConnection(logger: logger) {
                try await DecisionSourceCounts.load(environment: "Production", campaign: nil, connection: $0, logger: logger)
            }
            #expect(sources.map { "\($0.campaignId) \($0.source) \($0.offered)/\($0.skipped)" } == ["winback backfill 1/1"])
            let report = try await CampaignTasks.report(campaign: nil, environment: "Production", json: false, url: url, logger: logger)
            #expect(report.contains("winback [com.example.app] backfill: offered 1, held out 0, skipped 1"), "\(report)")
            let json = try await CampaignTasks.report(campaign: nil, environment: "Production", json: true, url: url, logger: logger)
            #expect(json.contains("\"kind\" : \"decisions\"") && json.contains("\"source\" : \"backfill\""), "\(json)")
        }
    }

    @Test(
        "a base with 12-month commitments: a cancelled commitment (autoRenewStatus still 1) is retained commitmentLead before its end, at once when nearer; a renewing one is left alone"
    )
    func commitmentBase() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let standIn = setup.standIn()
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let day: Int64 = 86_400_000
        // (id, days until the commitment ends, commitmentAutoRenewStatus)
        let subscribers = [("7200000000000001", Int64(200), 0), ("7200000000000002", Int64(10), 0), ("7200000000000003", Int64(200), 1)]
        for (otid, endsIn, renews) in subscribers {
            let transaction: [String: Any] = [
                "originalTransactionId": otid, "transactionId": otid, "bundleId": "com.example.app", "productId": "com.example.monthly",
                "environment": "Production", "signedDate": now, "type": "Auto-Renewable Subscription", "expiresDate": now + 20 * day,
                "purchaseDate": now - 10 * day, "originalPurchaseDate": now - 100 * day, "billingPlanType": "MONTHLY",
                "commitmentInfo": [
                    "billingPeriodNumber": 4, "totalBillingPeriods": 12, "commitmentExpiresDate": now + endsIn * day, "commitmentPrice": 119_880,
                ],
            ]
            let renewal: [String: Any] = [
                "originalTransactionId": otid, "productId": "com.example.monthly", "autoRenewProductId": "com.example.monthly",
                "autoRenewStatus": 1, "environment": "Production", "signedDate": now, "renewalBillingPlanType": "MONTHLY",
                "commitmentInfo": ["commitmentAutoRenewStatus": renews, "commitmentAutoRenewProductId": "com.example.monthly"],
            ]
            let fixture = AppStoreStatusFixture(
                environment: "Production",
                bundleId: "com.example.app",
                status: 1,
                originalTransactionId: otid,
                signedTransactionInfo: try setup.ca.sign(json: transaction),
                signedRenewalInfo: try setup.ca.sign(json: renewal)
            )
            standIn.statuses.withLock { $0[otid] = fixture }
        }
        let app = Application(router: standIn.router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { http in
            let port = try #require(http.port)
            try await withTestDatabase { client, url in
                var config = try config(setup, port: port)
                config.campaigns[0].trigger = "DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED"
                config.campaigns[0].conditions = CampaignConditions()
                _ = try await Backfill.run(
                    config: config,
                    url: url,
                    app: "com.example.app",
                    transactionIds: subscribers.map(\.0),
                    evaluate: true,
                    logger: logger
                ) { _ in }
                var holders: [String] = []
                for try await otid in try await client.query("SELECT original_transaction_id FROM reclaim.offers", logger: logger).decode(String.self)
                {
                    holders.append(otid)
                }
                #expect(holders == ["7200000000000002"], "the commitment ending in 10 days, at once")
                let deferred = try await firstInt(
                    client,
                    """
                    SELECT count(*)::int FROM reclaim.jobs WHERE kind = 'campaign-fire' AND payload->>'originalTransactionId' = '7200000000000001'
                      AND abs(extract(epoch FROM run_at - (now() + interval '186 days'))) < 600
                    """
                )
                #expect(deferred == 1, "decided 14 days before the commitment's end")
                #expect(
                    try await firstInt(
                        client,
                        "SELECT count(*)::int FROM reclaim.campaign_decisions WHERE original_transaction_id IN ('7200000000000001', '7200000000000003')"
                    ) == 0
                )
            }
        }
    }

    @Test("lapsedWithin: shorter than an hour, or on a trigger that comes while the subscription runs, refused with why")
    func lapsedWithinChecked() {
        func problems(_ trigger: String, _ lapsed: String) -> String {
            let yaml = """
                apps: [{bundleId: a, environments: [Sandbox], signingKeys: [{keyId: K, file: /k.p8}]}]
                campaigns:
                  - {id: c, app: a, trigger: \(trigger), offer: {productId: p, offerIdentifier: o}, conditions: {lapsedWithin: \(lapsed)}}
                """
            do {
                _ = try ReclaimConfig.parse(yaml: yaml)
                return ""
            } catch { return "\(error)" }
        }
        #expect(!problems("EXPIRED", "30d").contains("lapsedWithin"), "\(problems("EXPIRED", "30d"))")
        #expect(problems("EXPIRED", "10m").contains("shorter than an hour"))
        #expect(problems("DID_RENEW", "30d").contains("would never be met"))
    }

    @Test("an app that accepts only Sandbox is asked in Sandbox, once per id")
    func environments() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let standIn = setup.standIn()
        let app = Application(router: standIn.router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { http in
            let port = try #require(http.port)
            try await withTestDatabase { _, url in
                // Sandbox only (RecoveryTests' config): the unknown id is asked once, in Sandbox.
                let counts = try await Backfill.run(
                    config: try setup.config(port: port),
                    url: url,
                    app: "com.example.app",
                    transactionIds: [Self.unknown],
                    dryRun: true,
                    logger: logger
                ) { _ in }
                #expect(counts.notFound == 1)
                #expect(standIn.received.count == 1)
            }
        }
    }

    @Test("a forgotten id whose call to Apple fails is not stored, not even as a failure (issue 70)")
    func forgottenIdFailing() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let standIn = setup.standIn(failures: [1: .badRequest])
        let app = Application(router: standIn.router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { http in
            let port = try #require(http.port)
            try await withTestDatabase { client, url in
                let forgotten = "7199999999999991"
                _ = try await SubscriberTasks.forget(SubscriberLookup(.originalTransactionId(forgotten)), json: false, url: url, logger: logger)
                let counts = try await Backfill.run(
                    config: try setup.config(port: port),
                    url: url,
                    app: "com.example.app",
                    transactionIds: [forgotten],
                    dryRun: false,
                    logger: logger
                ) { _ in }
                #expect(counts.failed == 1)
                #expect(standIn.received.count == 1)
                #expect(
                    try await firstInt(client, "SELECT count(*)::int FROM reclaim.backfill_transactions WHERE transaction_id = '\(forgotten)'") == 0,
                    "the forgotten id was stored as a failure"
                )
            }
        }
    }
    @Test("an id whose subscriber's erasure is under way while Apple answers: nothing of them stored, not even the id (it was stored again)")
    func forgottenMeanwhile() async throws {
        try await withLapsers { standIn, config, client, url in
            let counts = try await whileForgetting(SubscriberLookup(.originalTransactionId(Self.recent)), client: client) {
                try await Backfill.run(
                    config: config,
                    url: url,
                    app: "com.example.app",
                    transactionIds: [Self.recent],
                    dryRun: false,
                    logger: logger
                ) { _ in }
            }
            #expect(counts.forgotten == 1, "\(counts)")
            for table in ["subscriptions", "notifications", "campaign_decisions", "offers", "backfill_answers"] {
                #expect(
                    try await firstInt(client, "SELECT count(*)::int FROM reclaim.\(table) WHERE original_transaction_id = '\(Self.recent)'")
                        == 0,
                    "reclaim.\(table) names the forgotten subscriber"
                )
            }
            #expect(
                try await firstInt(client, "SELECT count(*)::int FROM reclaim.backfill_transactions WHERE transaction_id = '\(Self.recent)'")
                    == 0,
                "the forgotten id was recorded"
            )
        }
    }
    @Test(
        "forgotten stays forgotten at backfill's edges: a forgotten id Apple does not know is not recorded as not found; forget erases an id given to backfill that only its answer ties to the subscriber"
    )
    func forgottenAtTheEdges() async throws {
        try await withLapsers { standIn, config, client, url in
            let older = "7100000000000009"  // another transaction of `recent`'s subscriber: Apple answers with theirs
            standIn.statuses.withLock { $0[older] = $0[Self.recent] }
            func recorded(_ id: String) async throws -> Int? {
                try await firstInt(client, "SELECT count(*)::int FROM reclaim.backfill_transactions WHERE transaction_id = '\(id)'")
            }
            let unknown = "7199999999999992"
            _ = try await SubscriberTasks.forget(SubscriberLookup(.originalTransactionId(unknown)), json: false, url: url, logger: logger)
            let counts = try await Backfill.run(
                config: config,
                url: url,
                app: "com.example.app",
                transactionIds: [unknown, older],
                logger: logger
            ) { _ in }
            #expect(counts.forgotten == 1 && counts.seeded == 1, "\(counts)")
            #expect(try await recorded(unknown) == 0, "the forgotten id was recorded as not found")
            #expect(try await recorded(older) == 1)

            _ = try await SubscriberTasks.forget(SubscriberLookup(.originalTransactionId(Self.recent)), json: false, url: url, logger: logger)
            #expect(try await recorded(older) == 0, "the id given to backfill outlived its subscriber's erasure")
            #expect(try await firstInt(client, "SELECT count(*)::int FROM reclaim.backfill_answers WHERE transaction_id = '\(older)'") == 0)
        }
    }
}
