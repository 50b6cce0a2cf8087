import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import ReclaimDomain
import ReclaimStore
import ReclaimTestSupport
import SwiftASN1
import Testing
import X509

@testable import ReclaimService

/// Offer codes outside the app: a pool imported as App Store Connect downloads it, one code per offered decision under
/// concurrent workers, sent by the `offer.issued` webhook, redemptions inferred from Apple's transactions (`offerType`
/// 3, the offer's reference name) into the pool, the funnel, the lift and the subscriber's story; `forget` erases the
/// code.
@Suite("Offer codes issued by campaigns, sent by webhook, their redemptions counted", .poolWatchdog)
struct OfferCodeTests {
    static let app = "com.example.codes"
    static let offer = "WINBACK-CODES"
    static let logger = TestPostgres.logger

    /// A config with one win-back campaign that hands out codes of `offer` (no signing key: codes are not signed).
    static func config(ca: TestCertificateAuthority, directory: URL, webhookPort: Int?, holdoutPercent: Int = 20) throws -> ReclaimConfig {
        try ca.root.serializeAsPEM().pemString.write(to: directory.appendingPathComponent("root.pem"), atomically: true, encoding: .utf8)
        var webhooks = ""
        if let webhookPort {
            try WebhookSecret.generateText().write(to: directory.appendingPathComponent("secret"), atomically: true, encoding: .utf8)
            webhooks = """
                    webhooks:
                      - url: http://127.0.0.1:\(webhookPort)/codes
                        secretFile: \(directory.path)/secret
                        events: [offer.issued]
                """
        }
        return try ReclaimConfig.parse(
            yaml: """
                forwarding: {allowPrivate: true}
                apps:
                  - bundleId: \(app)
                    appAppleId: 1234567890
                    environments: [Sandbox]
                    rootCertificates: [\(directory.path)/root.pem]
                \(webhooks)
                campaigns:
                  - id: winback-codes
                    app: \(app)
                    trigger: EXPIRED/VOLUNTARY
                    offer: {offerCodes: \(offer)}
                    deliverableFor: 30d
                    cooldown: 0s
                    holdoutPercent: \(holdoutPercent)
                """
        )
    }

    /// `count` codes as App Store Connect's download has them, one per line after a header.
    static func codeFile(_ directory: URL, prefix: String, count: Int) throws -> String {
        let file = directory.appendingPathComponent("\(prefix)-codes.csv")
        let lines = ["Offer Code"] + (0..<count).map { String(format: "\(prefix)%08d", $0) }
        try lines.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        return file.path
    }

    static func importRequest(
        file: String,
        environment: String = "Sandbox",
        eligibility: [OfferCodes.Eligibility] = [.expired],
        days: Int = 120
    )
        -> CodeTasks.ImportRequest
    {
        CodeTasks.ImportRequest(
            bundleId: app,
            environment: environment,
            offer: offer,
            productId: "com.example.monthly",
            eligibility: eligibility,
            expiresAt: Date().addingTimeInterval(TimeInterval(days) * 86_400),
            redemptionURL: nil,
            file: file
        )
    }

    /// A lapse: EXPIRED/VOLUNTARY of a subscription bought 90 days ago that expired a minute ago.
    static func lapse(_ notifications: TestNotifications, _ id: String, at: Date) throws -> Data {
        let millis = Int64(at.timeIntervalSince1970 * 1000)
        return try notifications.body(
            type: "EXPIRED",
            subtype: "VOLUNTARY",
            originalTransactionId: id,
            appAccountToken: nil,
            signedDate: at,
            transactionFields: [
                "purchaseDate": millis - 30 * 86_400_000, "originalPurchaseDate": millis - 90 * 86_400_000, "expiresDate": millis - 60_000,
            ],
            status: 2
        )
    }

    /// A code redeemed on coming back: SUBSCRIBED/RESUBSCRIBE whose transaction has offerType 3 and the offer's reference
    /// name (Apple names the offer, not the code).
    static func codeRedemption(_ notifications: TestNotifications, _ id: String, at: Date, type: String = "SUBSCRIBED") throws -> Data {
        try notifications.body(
            type: type,
            subtype: type == "SUBSCRIBED" ? "RESUBSCRIBE" : nil,
            originalTransactionId: id,
            appAccountToken: nil,
            signedDate: at,
            transactionFields: Self.redemptionFields(id, at: at)
        )
    }

    static func redemptionFields(_ id: String, at: Date) -> [String: Any] {
        let millis = Int64(at.timeIntervalSince1970 * 1000)
        return [
            "transactionId": "\(id)9\(millis % 100_000)", "offerType": 3, "offerIdentifier": offer, "offerPeriod": "P1M",
            "offerDiscountType": "PAY_AS_YOU_GO", "purchaseDate": millis, "expiresDate": millis + 30 * 86_400_000,
            "price": 990, "currency": "USD",
        ]
    }

    static func ints(_ client: Database, _ query: PostgresQuery) async throws -> [Int] {
        var values: [Int] = []
        for try await row in try await client.query(query, logger: logger).decode(Int.self) { values.append(row) }
        return values
    }

    static func strings(_ client: Database, _ query: PostgresQuery) async throws -> [String] {
        var values: [String] = []
        for try await row in try await client.query(query, logger: logger).decode(String.self) { values.append(row) }
        return values
    }

    /// Posts the bodies from `connections` connections at once, then lets two worker pools (four lanes each, small
    /// batches) process every job while the webhook sender runs.
    static func ingestAndProcess(_ bodies: [Data], connections: Int = 20, client: Database, dependencies: Dependencies) async throws {
        let app = Application(router: buildRouter(dependencies), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.ahc(.http)) { http in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for lane in 0..<connections {
                    group.addTask {
                        for body in stride(from: lane, to: bodies.count, by: connections).map({ bodies[$0] }) {
                            try await http.execute(
                                uri: "/v1/apple/notifications",
                                method: .post,
                                headers: [.contentType: "application/json"],
                                body: ByteBuffer(bytes: body)
                            ) { #expect($0.status == .ok) }
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        let pools = (0..<2).map { _ in
            WorkerPool(
                queue: JobQueue(postgres: client),
                handlers: jobHandlers(dependencies),
                options: .init(concurrency: 4, batchSize: 4, pollInterval: .milliseconds(20)),
                logger: logger
            )
        }
        try await withServices(pools) {
            try await eventually("every notification processed", timeout: .seconds(120)) {
                try await ints(client, "SELECT count(*)::int FROM reclaim.jobs WHERE kind <> 'webhook' AND state <> 'completed'") == [0]
            }
        }
    }

    @Test(
        "200 lapses at once from 20 connections: each offered decision one code, never one code twice, each subscriber one code of the offer; webhooks carry code and URL; redemptions inferred into pool, funnel, lift and story; forget erases the code"
    )
    func lapsesRedemptionsAndErasure() async throws {
        let ca = try TestCertificateAuthority()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reclaim-codes-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let receiver = TestReceiver()
        try await receiver.serve { port in
            let config = try Self.config(ca: ca, directory: directory, webhookPort: port)
            let notifications = TestNotifications(ca: ca, bundleId: Self.app)
            try await withTestDatabase { client, url in
                // The pool: imported twice (idempotent); the same codes refused for another offer, nothing written.
                let file = try Self.codeFile(directory, prefix: "WB", count: 250)
                let first = try await CodeTasks.importCodes(Self.importRequest(file: file), config: config, url: url, logger: Self.logger)
                #expect(first.contains("250 codes added, 0 already in the pool"), "\(first)")
                let again = try await CodeTasks.importCodes(Self.importRequest(file: file), config: config, url: url, logger: Self.logger)
                #expect(again.contains("0 codes added, 250 already in the pool"), "\(again)")
                var other = Self.importRequest(file: file)
                other.offer = "OTHER-OFFER"
                await #expect(throws: OfferCodeStore.ImportRefused.self) {
                    _ = try await CodeTasks.importCodes(other, config: config, url: url, logger: Self.logger)
                }
                #expect(try await Self.ints(client, "SELECT count(*)::int FROM reclaim.offer_code_pools") == [1])

                let dependencies = try Dependencies.test(postgres: client, config: config)
                try await client.transaction(logger: Self.logger) {
                    try await OutboundStore.sync(dependencies.outboundTargets.map(\.row), connection: $0, logger: Self.logger)
                }
                let sender = OutboundSender(
                    targets: dependencies.outboundTargets,
                    postgres: client,
                    concurrency: 4,
                    allowPrivate: true,
                    pollInterval: .milliseconds(100),
                    logger: Self.logger
                )
                let ids = (0..<200).map { String(6_000_000_000_000_000 + $0) }
                let lapsedAt = Date().addingTimeInterval(-600)
                try await withServices([sender]) {
                    try await Self.ingestAndProcess(
                        try ids.map { try Self.lapse(notifications, $0, at: lapsedAt) },
                        client: client,
                        dependencies: dependencies
                    )
                    let offered = try await Self.ints(client, "SELECT count(*)::int FROM reclaim.campaign_decisions WHERE outcome = 'offered'")[0]
                    try await eventually("a webhook per code", timeout: .seconds(60)) {
                        Set(receiver.received.compactMap { $0.headers["webhook-id"] }).count >= offered
                    }
                }

                // Every subscriber decided once; the holdout is about a fifth; nothing skipped.
                var outcomes: [String: Int] = [:]
                for try await (outcome, count) in try await client.query(
                    "SELECT outcome, count(*)::int FROM reclaim.campaign_decisions GROUP BY 1",
                    logger: Self.logger
                ).decode((String, Int).self) {
                    outcomes[outcome] = count
                }
                let offered = outcomes["offered"] ?? 0
                #expect(offered + (outcomes["held_out"] ?? 0) == 200 && outcomes["skipped"] == nil, "\(outcomes)")
                #expect((20...60).contains(outcomes["held_out"] ?? 0), "\(outcomes)")

                // One code per offered decision, none twice, one per subscriber; none for the held out.
                #expect(try await Self.ints(client, "SELECT count(*)::int FROM reclaim.offer_codes WHERE decision_id IS NOT NULL") == [offered])
                #expect(
                    try await Self.ints(
                        client,
                        """
                        SELECT count(*)::int FROM reclaim.campaign_decisions d
                        WHERE d.outcome = 'offered' AND NOT EXISTS (SELECT 1 FROM reclaim.offer_codes c WHERE c.decision_id = d.id)
                        """
                    ) == [0]
                )
                #expect(
                    try await Self.ints(
                        client,
                        "SELECT count(*)::int FROM (SELECT original_transaction_id FROM reclaim.offer_codes WHERE decision_id IS NOT NULL GROUP BY 1 HAVING count(*) > 1) x"
                    ) == [0]
                )

                // The webhooks: one per code (a retry keeps its webhook-id), each code once, its subscriber's, with Apple's URL.
                var events: [String: [String: Any]] = [:]
                for request in receiver.received {
                    guard let id = request.headers["webhook-id"], let event = WebhookTests.event(request.body) else { continue }
                    events[id] = event
                }
                let data = events.values.compactMap { $0["data"] as? [String: Any] }
                #expect(data.count == offered && data.allSatisfy { $0["kind"] as? String == "offerCode" && $0["offerId"] == nil })
                let sentCodes = data.compactMap { $0["offerCode"] as? String }
                #expect(Set(sentCodes).count == offered, "each code once")
                var issuedTo: [String: String] = [:]
                for try await (code, subscriber) in try await client.query(
                    "SELECT code, original_transaction_id FROM reclaim.offer_codes WHERE decision_id IS NOT NULL",
                    logger: Self.logger
                ).decode((String, String).self) {
                    issuedTo[code] = subscriber
                }
                for item in data {
                    let code = try #require(item["offerCode"] as? String)
                    #expect(issuedTo[code] == item["originalTransactionId"] as? String)
                    #expect(item["redemptionUrl"] as? String == "https://apps.apple.com/redeem?ctx=offercodes&id=1234567890&code=\(code)")
                    #expect(item["offerIdentifier"] as? String == Self.offer && item["campaignId"] as? String == "winback-codes")
                    #expect(item["codeExpiresAt"] is String && item["decisionId"] is String)
                }

                // Redemptions: ten treated subscribers come back with the offer; two held out redeem a code passed on to
                // them; one treated renews a pay-as-you-go month (offerType 3 again); one treated lapses again.
                let treated = try await Self.strings(
                    client,
                    "SELECT original_transaction_id FROM reclaim.campaign_decisions WHERE outcome = 'offered' ORDER BY original_transaction_id LIMIT 11"
                )
                let held = try await Self.strings(
                    client,
                    "SELECT original_transaction_id FROM reclaim.campaign_decisions WHERE outcome = 'held_out' ORDER BY original_transaction_id LIMIT 2"
                )
                let back = Date().addingTimeInterval(-300)
                var later = try treated.prefix(10).map { try Self.codeRedemption(notifications, $0, at: back) }
                later += try held.map { try Self.codeRedemption(notifications, $0, at: back) }
                later.append(try Self.codeRedemption(notifications, treated[0], at: back.addingTimeInterval(60), type: "DID_RENEW"))
                later.append(try Self.lapse(notifications, treated[10], at: back))
                try await Self.ingestAndProcess(later, connections: 4, client: client, dependencies: dependencies)

                let again10 = try await Self.strings(
                    client,
                    "SELECT outcome || ': ' || reason FROM reclaim.campaign_decisions WHERE original_transaction_id = \(treated[10]) ORDER BY decided_at DESC LIMIT 1"
                )
                #expect(again10.first?.hasPrefix("skipped: offer code already given") == true, "\(again10)")

                let status = try await client.withConnection(logger: Self.logger) {
                    try await OfferCodeStore.status(connection: $0, logger: Self.logger)
                }
                #expect(status.count == 1)
                let pool = try #require(status.first)
                #expect(pool.unused == 250 - offered && pool.issued == offered && pool.redeemed == 10 && pool.expired == 0, "\(pool)")
                #expect(pool.redeemedWithoutCode == 2, "\(pool)")
                let json = try await CodeTasks.status(json: true, url: url, logger: Self.logger)
                #expect(json.contains("\"redeemedWithoutCode\" : 2") && json.contains("\"unused\" : \(250 - offered)"), "\(json)")
                #expect(!json.contains("WB0000"), "status never shows a code")

                // The funnel counts codes as offers; the lift's redemption rate is the treated who redeemed.
                for try await (offeredCount, redeemed, codesIssued, codesRedeemed) in try await client.query(
                    "SELECT offered::int, redeemed::int, codes_issued::int, codes_redeemed::int FROM reclaim.campaign_funnel WHERE campaign_id = 'winback-codes'",
                    logger: Self.logger
                ).decode((Int, Int, Int, Int).self) {
                    #expect(offeredCount == offered && codesIssued == offered && redeemed == 10 && codesRedeemed == 10)
                }
                for try await (treatedCount, rate) in try await client.query(
                    "SELECT treated::int, redemption_rate FROM reclaim.campaign_variant_lift WHERE campaign_id = 'winback-codes'",
                    logger: Self.logger
                ).decode((Int, Double).self) {
                    #expect(treatedCount == offered && abs(rate - 10 / Double(offered)) < 1e-9)
                }
                // Each redemption of a code given names its decision, the renewal too; the held out's name none.
                #expect(
                    try await Self.ints(
                        client,
                        "SELECT count(*)::int FROM reclaim.offer_redemptions WHERE offer_type = 3 AND code_decision_id IS NOT NULL"
                    )
                        == [11]
                )

                // The story says which code, and that its redemption is inferred.
                let story = try await client.withConnection(logger: Self.logger) {
                    try await SubscriberStore.story(SubscriberLookup(.originalTransactionId(treated[0])), connection: $0, logger: Self.logger)
                }
                let code = try #require(story.subscriptions.first?.offerCodes.first)
                #expect(code.offer == Self.offer && code.redeemedAt != nil && issuedTo[code.code] == treated[0])
                #expect(SubscriberTasks.text(story).contains("inferred"))

                // Forget: the code is kept as its hash (counted in its pool), and importing it again is refused.
                _ = try await SubscriberErasure.forget(SubscriberLookup(.originalTransactionId(treated[0])), postgres: client, logger: Self.logger)
                #expect(try await Self.strings(client, "SELECT code FROM reclaim.offer_codes WHERE code = \(code.code)").isEmpty)
                #expect(try await Self.ints(client, "SELECT count(*)::int FROM reclaim.offer_codes WHERE code LIKE 'forgotten:%'") == [1])
                let erased = directory.appendingPathComponent("erased.csv")
                try code.code.write(to: erased, atomically: true, encoding: .utf8)
                var reimport = Self.importRequest(file: erased.path)
                reimport.offer = "ANOTHER-OFFER"
                await #expect(throws: OfferCodeStore.ImportRefused.self) {
                    _ = try await CodeTasks.importCodes(reimport, config: config, url: url, logger: Self.logger)
                }
                let after = try await client.withConnection(logger: Self.logger) {
                    try await OfferCodeStore.status(connection: $0, logger: Self.logger)
                }
                #expect(after.first?.issued == offered && after.first?.redeemed == 10)
            }
        }
    }

    @Test(
        "a pool that runs dry: codes go to the first decisions, the rest skip with the reason; a code expiring within the delivery window is not taken"
    )
    func dryPool() async throws {
        let ca = try TestCertificateAuthority()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reclaim-codes-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try Self.config(ca: ca, directory: directory, webhookPort: nil, holdoutPercent: 0)
        let notifications = TestNotifications(ca: ca, bundleId: Self.app)
        try await withTestDatabase { client, url in
            _ = try await CodeTasks.importCodes(
                Self.importRequest(file: try Self.codeFile(directory, prefix: "OK", count: 3)),
                config: config,
                url: url,
                logger: Self.logger
            )
            // Valid for 10 days: the campaign's decisions are deliverable for 30.
            _ = try await CodeTasks.importCodes(
                Self.importRequest(file: try Self.codeFile(directory, prefix: "SOON", count: 5), days: 10),
                config: config,
                url: url,
                logger: Self.logger
            )
            let dependencies = try Dependencies.test(postgres: client, config: config)
            let ids = (0..<10).map { String(6_100_000_000_000_000 + $0) }
            try await Self.ingestAndProcess(
                try ids.map { try Self.lapse(notifications, $0, at: Date().addingTimeInterval(-600)) },
                connections: 5,
                client: client,
                dependencies: dependencies
            )
            var outcomes: [String: Int] = [:]
            for try await (outcome, count) in try await client.query(
                "SELECT outcome || ': ' || split_part(reason, ':', 1), count(*)::int FROM reclaim.campaign_decisions GROUP BY 1",
                logger: Self.logger
            ).decode((String, Int).self) {
                outcomes[outcome] = count
            }
            #expect(outcomes == ["offered: eligible": 3, "skipped: no code left": 7], "\(outcomes)")
            #expect(
                try await Self.strings(client, "SELECT code FROM reclaim.offer_codes WHERE decision_id IS NOT NULL ORDER BY code") == [
                    "OK00000000", "OK00000001", "OK00000002",
                ]
            )
        }
    }

    @Test("campaigns check reads the pools: missing, empty, of another eligibility or product, or no database, refused; Sandbox-only a warning")
    func checkReadsThePools() async throws {
        let ca = try TestCertificateAuthority()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reclaim-codes-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try Self.config(ca: ca, directory: directory, webhookPort: nil)
        await #expect(throws: ConfigError.self) { _ = try await CampaignTasks.check(config) }
        try await withTestDatabase { _, url in
            func problems() async -> String {
                do {
                    return "OK: " + (try await CampaignTasks.check(config, database: url))
                } catch {
                    return "\(error)"
                }
            }
            #expect(await problems().contains("no pool of that offer for \(Self.app)"))
            // An offer for existing subscribers cannot win back lapsed ones.
            let file = try Self.codeFile(directory, prefix: "EX", count: 2)
            _ = try await CodeTasks.importCodes(
                Self.importRequest(file: file, eligibility: [.existing]),
                config: config,
                url: url,
                logger: Self.logger
            )
            let wrong = await problems()
            #expect(wrong.contains("the offer is for existing subscribers, but EXPIRED/VOLUNTARY reaches expired ones"), "\(wrong)")
            // Expired codes only: empty.
            try await withTestDatabase { client, url in
                let file = try Self.codeFile(directory, prefix: "OLD", count: 2)
                _ = try await CodeTasks.importCodes(
                    Self.importRequest(file: file, eligibility: [.expired]),
                    config: config,
                    url: url,
                    logger: Self.logger
                )
                try await client.query("UPDATE reclaim.offer_codes SET expires_at = now() - interval '1 day'", logger: Self.logger)
                await #expect(throws: ConfigError.self) { _ = try await CampaignTasks.check(config, database: url) }
                try await client.query("UPDATE reclaim.offer_codes SET expires_at = now() + interval '90 days'", logger: Self.logger)
                let fine = try await CampaignTasks.check(config, database: url)
                #expect(fine.contains("winback-codes [\(Self.app)] on EXPIRED/VOLUNTARY → offer codes of \(Self.offer)"), "\(fine)")
            }
        }
    }

    @Test("the config refuses codes on the cancel sheet and beside a promotional offer, and needs no signing key for a campaign of codes")
    func configRules() throws {
        func refusal(_ campaign: String) -> String {
            do {
                _ = try ReclaimConfig.parse(
                    yaml: """
                        apps:
                          - bundleId: \(Self.app)
                            appAppleId: 1234567890
                        campaigns:
                          - id: c
                            app: \(Self.app)
                        \(campaign)
                        """
                )
                return "accepted"
            } catch {
                return "\(error)"
            }
        }
        #expect(refusal("    trigger: EXPIRED\n    offer: {offerCodes: \(Self.offer)}") == "accepted")
        #expect(
            refusal("    trigger: RETENTION_MESSAGING\n    offer: {offerCodes: \(Self.offer)}").contains("offer.offerCodes: Apple's realtime answer")
        )
        #expect(
            refusal("    trigger: EXPIRED\n    offer: {offerCodes: \(Self.offer), offerIdentifier: X, productId: p}")
                .contains("give offerCodes or offerIdentifier(s), not both")
        )
        #expect(refusal("    trigger: EXPIRED\n    offer: {offerIdentifier: X, productId: p}").contains("no signingKeys"))
    }

    @Test("a redemption Apple reports is a JWSTransactionDecodedPayload of offerType OFFER_CODE in Apple's Python library")
    func redemptionReadByApplesModels() async throws {
        let fields = Self.redemptionFields("6000000000000001", at: Date())
        var transaction: [String: Any] = [
            "originalTransactionId": "6000000000000001", "bundleId": Self.app, "productId": "com.example.monthly",
            "environment": "Sandbox", "signedDate": fields["purchaseDate"] ?? 0, "type": "Auto-Renewable Subscription",
        ]
        transaction.merge(fields) { $1 }
        let script = #"""
            import json, sys
            from appstoreserverlibrary.models.JWSTransactionDecodedPayload import JWSTransactionDecodedPayload
            from appstoreserverlibrary.models.OfferType import OfferType
            from appstoreserverlibrary.models.LibraryUtility import _get_cattrs_converter
            body = json.load(sys.stdin)
            t = _get_cattrs_converter(JWSTransactionDecodedPayload).structure(body, JWSTransactionDecodedPayload)
            assert t.offerType == OfferType.OFFER_CODE, t.offerType
            assert t.offerIdentifier == "WINBACK-CODES", t.offerIdentifier
            print("checked")
            """#
        let run = try await Subprocess.run("/usr/bin/env", ["python3", "-c", script], input: try JSONSerialization.data(withJSONObject: transaction))
        #expect(run.status == 0 && run.output.hasPrefix("checked"), "\(run.output)\(run.errors)")
    }
}
