import Crypto
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

/// Discounts through every door (Apple's win-back offers, App Store Connect's retention offers) recorded apart from
/// Reclaim's, and one budget per subscriber held by campaigns, the cancel sheet and grants.
@Suite("Every discount counted, one discount budget", .poolWatchdog)
struct DiscountBudgetTests {
    static let winBack = "5000000000000001"
    static let retention = "5000000000000002"
    static let fresh = "5000000000000003"

    @Test(
        "a win-back (offerType 4) and an App Store Connect retention offer (5) are recorded by channel and hold back a campaign, the cancel sheet and a grant"
    )
    func budgetAcrossDoors() async throws {
        let ca = try TestCertificateAuthority()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reclaim-budget-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = SigningKey.generate(keyId: "BUDGETKEY1")
        try key.pkcs8PEM.write(to: directory.appendingPathComponent("key.p8"), atomically: true, encoding: .utf8)
        try ca.root.serializeAsPEM().pemString.write(to: directory.appendingPathComponent("root.pem"), atomically: true, encoding: .utf8)
        let config = try ReclaimConfig.parse(
            yaml: """
                apps:
                  - bundleId: com.example.app
                    appAppleId: 1234567890
                    environments: [Sandbox]
                    issuerId: 11111111-2222-3333-4444-555555555555
                    signingKeys: [{keyId: BUDGETKEY1, file: \(directory.path)/key.p8}]
                    rootCertificates: [\(directory.path)/root.pem]
                    discountBudget: {redemptions: 1, window: 90d}
                campaigns:
                  - id: retain
                    app: com.example.app
                    trigger: DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED
                    offer: {productId: com.example.monthly, offerIdentifier: RETAIN50}
                    deliverableFor: 30d
                  - id: cancel-sheet
                    app: com.example.app
                    trigger: RETENTION_MESSAGING
                    offer: {productId: com.example.monthly, offerIdentifier: SAVE50}
                    messageIdentifier: 6f1c0a52-8a0e-4c4e-9d55-0b8f4f0f6a13
                """
        )
        let notifications = TestNotifications(ca: ca)
        let start = Date().addingTimeInterval(-3600)
        var bodies: [Data] = []
        // Apple's own doors: a win-back offer taken on resubscribing, a retention offer applied at a renewal.
        bodies.append(
            try notifications.body(
                type: "SUBSCRIBED",
                subtype: "RESUBSCRIBE",
                originalTransactionId: Self.winBack,
                signedDate: start,
                transactionFields: [
                    "offerType": 4, "offerIdentifier": "APPLE-WINBACK", "offerPeriod": "P1M",
                    "purchaseDate": Int64(start.timeIntervalSince1970 * 1000),
                    "expiresDate": Int64(start.timeIntervalSince1970 * 1000) + 30 * 86_400_000,
                ]
            )
        )
        bodies.append(
            try notifications.body(
                type: "DID_RENEW",
                subtype: nil,
                originalTransactionId: Self.retention,
                signedDate: start,
                transactionFields: [
                    "offerType": 5, "offerIdentifier": "ASC-RETENTION", "offerPeriod": "P3M",
                    "purchaseDate": Int64(start.timeIntervalSince1970 * 1000),
                    "expiresDate": Int64(start.timeIntervalSince1970 * 1000) + 30 * 86_400_000,
                ]
            )
        )
        // Then all three turn auto-renew off; the third has had no discount.
        for id in [Self.winBack, Self.retention, Self.fresh] {
            bodies.append(
                try notifications.body(
                    originalTransactionId: id,
                    signedDate: start.addingTimeInterval(600),
                    transactionFields: ["expiresDate": Int64(start.timeIntervalSince1970 * 1000) + 30 * 86_400_000]
                )
            )
        }
        let sent = bodies
        try await withTestDatabase { client, _ in
            let dependencies = try Dependencies.test(postgres: client, config: config)
            try await processNotifications(sent, client: client, dependencies: dependencies)

            var decisions: [String: (String, String)] = [:]
            let rows = try await client.query(
                "SELECT original_transaction_id, outcome, reason FROM reclaim.campaign_decisions WHERE campaign_id = 'retain'",
                logger: TestPostgres.logger
            )
            for try await (id, outcome, reason) in rows.decode((String, String, String).self) { decisions[id] = (outcome, reason) }
            #expect(decisions[Self.fresh]?.0 == "offered", "\(decisions)")
            for id in [Self.winBack, Self.retention] {
                #expect(
                    decisions[id]?.0 == "skipped" && decisions[id]?.1.hasPrefix("discount budget: 1 discounted offer redeemed") == true,
                    "\(decisions)"
                )
            }

            // The funnel's other half: each door apart from Reclaim's.
            var channels: [String: Int64] = [:]
            let channelRows = try await client.query(
                "SELECT channel, sum(redemptions)::bigint FROM reclaim.discount_channels_daily GROUP BY channel",
                logger: TestPostgres.logger
            )
            for try await (channel, count) in channelRows.decode((String, Int64).self) { channels[channel] = count }
            #expect(channels == ["win_back": 1, "retention_offer": 1], "\(channels)")
            let periods = try await client.query(
                "SELECT string_agg(offer_type || ' ' || offer_identifier || ' ' || offer_period, ', ' ORDER BY offer_type) FROM reclaim.offer_redemptions",
                logger: TestPostgres.logger
            )
            for try await text in periods.decode(String.self) { #expect(text == "4 APPLE-WINBACK P1M, 5 ASC-RETENTION P3M") }
            // /console shows them by channel.
            let report = try await client.withConnection(logger: TestPostgres.logger) {
                try await ConsoleReport.load(bundleId: "com.example.app", environment: "Sandbox", connection: $0, logger: TestPostgres.logger)
            }
            let page = ConsolePage(report: report, bundleId: "com.example.app", environment: "Sandbox")
            #expect(page.discountChannels.map { "\($0.channel) \($0.redemptions)" }.sorted() == ["retention_offer 1", "win_back 1"])

            // The cancel sheet holds its offer back for both (answering {}), and offers it to the third.
            let app = Application(router: buildRouter(dependencies), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.live) { http in
                for (id, expected) in [(Self.winBack, "{}"), (Self.retention, "{}"), (Self.fresh, "promotionalOffer")] {
                    let answer = try await http.execute(
                        uri: "/v1/apple/retention-messaging",
                        method: .post,
                        headers: [.contentType: "application/json"],
                        body: ByteBuffer(
                            string: try CancelSheetTests.request(
                                ca,
                                originalTransactionId: id,
                                productId: "com.example.monthly",
                                appAppleId: 1_234_567_890
                            )
                        )
                    ) { String(buffer: $0.body) }
                    #expect(expected == "{}" ? answer == "{}" : answer.contains(expected), "\(id): \(answer)")
                }
            }
            var sheet: [String: (String, String)] = [:]
            let sheetRows = try await client.query(
                "SELECT original_transaction_id, outcome, reason FROM reclaim.cancel_sheet_decisions",
                logger: TestPostgres.logger
            )
            for try await (id, outcome, reason) in sheetRows.decode((String, String, String).self) { sheet[id] = (outcome, reason) }
            #expect(sheet[Self.fresh]?.0 == "answered")
            #expect(sheet[Self.winBack]?.0 == "held_back" && sheet[Self.winBack]?.1.contains("4/APPLE-WINBACK") == true, "\(sheet)")
            #expect(sheet[Self.retention]?.0 == "held_back" && sheet[Self.retention]?.1.contains("5/ASC-RETENTION") == true, "\(sheet)")

            // A grant is refused unless it overrides the budget.
            let grants = GrantService(
                postgres: client,
                issuer: dependencies.issuer,
                budgets: ["com.example.app": DiscountBudget(redemptions: 1, window: 90 * 86_400)]
            )
            var request = GrantRequest(
                bundleId: "com.example.app",
                appAccountToken: nil,
                originalTransactionId: Self.winBack,
                environment: "Sandbox",
                productId: "com.example.monthly",
                offerIdentifier: "REFER100",
                reason: "referral",
                campaign: "referrals"
            )
            let admin = UUID()
            guard case .overBudget(let reason) = try await grants.grant(request, key: "g1", adminKeyId: admin, logger: TestPostgres.logger) else {
                Issue.record("a grant past the budget was not refused")
                return
            }
            #expect(reason.hasPrefix("discount budget:"))
            request.overrideDiscountBudget = true
            guard case .created = try await grants.grant(request, key: "g2", adminKeyId: admin, logger: TestPostgres.logger) else {
                Issue.record("an overriding grant was not made")
                return
            }
        }
    }
}
