import Foundation
import Hummingbird
import HummingbirdTesting
import PostgresNIO
import ReclaimDomain
import ReclaimService
import ReclaimStore
import ReclaimTestSupport
import Testing

/// Issue 63: RESCIND_CONSENT ("the parent or guardian has withdrawn consent for a child's app usage") names no
/// transaction; its signed app transaction's appTransactionId finds the account's subscriptions, which get no
/// campaign, grant or cancel-sheet answer afterwards.
@Suite("RESCIND_CONSENT: the app account's subscriptions get no campaign, grant or cancel-sheet answer again", .poolWatchdog)
struct RescindConsentTests {
    let logger = TestPostgres.logger
    static let account = "704289572818311111"

    /// A RESCIND_CONSENT as Apple sends it: `appData` with the signed app transaction, no `data`.
    static func rescindConsent(_ ca: TestCertificateAuthority, appTransactionId: String, signedDate: Date) throws -> Data {
        let millis = Int64(signedDate.timeIntervalSince1970 * 1000)
        let appTransaction: [String: Any] = [
            "appTransactionId": appTransactionId, "bundleId": "GeniusParentingAI", "appAppleId": 6_747_332_178, "receiptType": "Sandbox",
            "receiptCreationDate": millis, "originalPurchaseDate": millis, "signedDate": millis,
        ]
        let payload: [String: Any] = [
            "notificationType": "RESCIND_CONSENT", "notificationUUID": UUID().uuidString.lowercased(), "version": "2.0", "signedDate": millis,
            "appData": [
                "appAppleId": 6_747_332_178, "bundleId": "GeniusParentingAI", "environment": "Sandbox",
                "signedAppTransactionInfo": try ca.sign(json: appTransaction),
            ] as [String: Any],
        ]
        return try JSONSerialization.data(withJSONObject: ["signedPayload": try ca.sign(json: payload)])
    }

    @Test(
        "the live offer is withdrawn; later notifications, a subscription first heard of afterwards, a grant and the cancel sheet decide nothing for the account; another account is unaffected"
    )
    func rescind() async throws {
        let ca = try TestCertificateAuthority()
        let setup = try CampaignTestSetup(ca: ca, settings: CancelSheetTests.campaigns())
        defer { setup.remove() }
        let notifications = TestNotifications(ca: ca, bundleId: "GeniusParentingAI", environment: "Sandbox", appAppleId: 6_747_332_178)
        let start = Date().addingTimeInterval(-3600)
        @Sendable func autoRenewOff(_ otid: String, account: String, at offset: TimeInterval) throws -> Data {
            try notifications.body(
                originalTransactionId: otid,
                appAccountToken: UUID(),
                signedDate: start.addingTimeInterval(offset),
                transactionFields: [
                    "appTransactionId": account, "productId": CancelSheetTests.monthly,
                    "expiresDate": Int64(Date().addingTimeInterval(86400 * 20).timeIntervalSince1970 * 1000),
                ]
            )
        }
        try await withTestDatabase { client, _ in
            try await client.withConnection(logger: logger) {
                try await CampaignStore.sync(try setup.config.domainCampaigns(), connection: $0, logger: logger)
            }
            let dependencies = try Dependencies.test(postgres: client, config: setup.config)
            func outcomes(_ otid: String) async throws -> [String] {
                var found: [String] = []
                let rows = try await client.query(
                    "SELECT outcome || ': ' || reason FROM reclaim.campaign_decisions WHERE original_transaction_id = \(otid) ORDER BY decided_at",
                    logger: logger
                )
                for try await row in rows.decode(String.self) { found.append(row) }
                return found
            }

            try await processNotifications(
                [
                    try autoRenewOff("3000000000990001", account: Self.account, at: 0),
                    try autoRenewOff("3000000000990002", account: "704289572818322222", at: 1),
                ],
                client: client,
                dependencies: dependencies
            )
            #expect(try await firstInt(client, "SELECT count(*)::int FROM reclaim.offers WHERE state = 'ready'") == 2, "both offered before")

            try await processNotifications(
                [try Self.rescindConsent(ca, appTransactionId: Self.account, signedDate: start.addingTimeInterval(60))],
                client: client,
                dependencies: dependencies
            )
            #expect(
                try await firstInt(
                    client,
                    "SELECT count(*)::int FROM reclaim.offers WHERE original_transaction_id = '3000000000990001' AND state = 'withdrawn' AND end_reason LIKE '%RESCIND_CONSENT%'"
                ) == 1
            )
            #expect(
                try await firstInt(
                    client,
                    "SELECT count(*)::int FROM reclaim.offers WHERE original_transaction_id = '3000000000990002' AND state = 'ready'"
                ) == 1
            )
            #expect(try await firstInt(client, "SELECT count(*)::int FROM reclaim.subscriptions WHERE consent_rescinded_at IS NOT NULL") == 1)

            // Later: the same subscription turns auto-renew off again, and a subscription Reclaim first hears of now
            // names the same account. Neither is offered anything, each skip says why.
            try await processNotifications(
                [
                    try autoRenewOff("3000000000990001", account: Self.account, at: 120),
                    try autoRenewOff("3000000000990003", account: Self.account, at: 121),
                ],
                client: client,
                dependencies: dependencies
            )
            let again = try await outcomes("3000000000990001")
            #expect(again.last?.hasPrefix("skipped: consent rescinded") == true, "\(again)")
            let newcomer = try await outcomes("3000000000990003")
            #expect(!newcomer.isEmpty && newcomer.allSatisfy { $0.hasPrefix("skipped: consent rescinded") }, "\(newcomer)")
            #expect(try await firstInt(client, "SELECT count(*)::int FROM reclaim.offers WHERE state = 'ready'") == 1, "only the other account's")

            // The cancel sheet answers {} and records nothing for the account.
            try await CancelSheetTests.withServer(setup, database: client) { post in
                let premium = { (otid: String) in try CancelSheetTests.request(ca, originalTransactionId: otid, productId: CancelSheetTests.premium) }
                let answer = try await post(try premium("3000000000990001"))
                #expect(answer.0 == .ok && answer.1 == "{}", "\(answer)")
            }
            #expect(
                try await firstInt(
                    client,
                    "SELECT count(*)::int FROM reclaim.cancel_sheet_decisions WHERE original_transaction_id = '3000000000990001'"
                ) == 0
            )
            // What the cancel sheet reads: the account's withdrawal, and none for the other account.
            for (otid, rescinded) in [("3000000000990001", true), ("3000000000990002", false)] {
                let context = try await client.withConnection(logger: logger) {
                    try await CancelSheetStore.context(
                        of: SubscriberKey(bundleId: "GeniusParentingAI", environment: "Sandbox", originalTransactionId: otid),
                        requestIdentifier: UUID().uuidString,
                        connection: $0,
                        logger: logger
                    )
                }
                #expect((context.state?.consentRescindedAt != nil) == rescinded, "\(otid)")
            }

            // A grant to the account is refused with why.
            let adminKey = try await TestKeys(client: client).create(scope: .admin, bundleId: nil, logger: logger)
            let app = Application(router: buildRouter(dependencies), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.router) { http in
                let body = [
                    "bundleId": "GeniusParentingAI", "originalTransactionId": "3000000000990001", "productId": CancelSheetTests.monthly,
                    "offerIdentifier": "RETAIN50", "reason": "referral", "campaign": "referral",
                ]
                let (status, answer) = try await GrantTests.grant(body, key: adminKey, idempotencyKey: "rescinded-1", http: http)
                #expect(status == .unprocessableContent, "\(status) \(answer)")
                #expect("\(answer)".contains("RESCIND_CONSENT"), "\(answer)")
            }
        }
    }
}
