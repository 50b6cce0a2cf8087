import Foundation
import PostgresNIO
import ReclaimDomain
import ReclaimStore
import ReclaimTestSupport
import Testing

@testable import ReclaimService

/// Which door won back whom: decisions record whether Apple listed win-back offers for the subscriber (a campaign
/// that stands aside skips, one that does not decides beside them), and `reclaim campaigns report` and
/// `reclaim.win_back_doors` show Apple's win-back offers (offerType 4), App Store Connect's retention offers (5) and
/// offer codes Reclaim did not give (3) beside the campaigns.
@Suite("Apple's doors beside Reclaim's campaigns", .poolWatchdog)
struct WinBackDoorsTests {
    static let logger = TestPostgres.logger

    @Test(
        "a subscriber Apple lists win-back offers for: one campaign stands aside, another decides beside them; redemptions of types 4, 5 and 3 outside any campaign reported as Apple's doors"
    )
    func doors() async throws {
        let ca = try TestCertificateAuthority()
        let files = try TestAppFiles(ca: ca, keyId: "DOORKEY001", prefix: "reclaim-doors")
        defer { files.remove() }
        let app = "com.example.doors"
        let config = try ReclaimConfig.parse(
            yaml: """
                apps:
                \(files.app(app, keyId: "DOORKEY001"))
                campaigns:
                  - id: aside
                    app: \(app)
                    trigger: EXPIRED/VOLUNTARY
                    offer: {productId: com.example.monthly, offerIdentifier: WINBACK30}
                    deliverableFor: 30d
                    priority: 10
                  - id: beside
                    app: \(app)
                    trigger: EXPIRED/VOLUNTARY
                    offer: {productId: com.example.monthly, offerIdentifier: WINBACK50}
                    deliverableFor: 30d
                    standAsideForWinBack: false
                """
        )
        let notifications = TestNotifications(ca: ca, bundleId: app)
        let at = Date().addingTimeInterval(-3600)
        let millis = Int64(at.timeIntervalSince1970 * 1000)
        func lapse(_ id: String, appleOffers: [String]) throws -> Data {
            var renewal: [String: Any] = [
                "originalTransactionId": id, "autoRenewProductId": "com.example.monthly", "productId": "com.example.monthly",
                "autoRenewStatus": 0, "environment": "Sandbox", "signedDate": millis,
            ]
            if !appleOffers.isEmpty { renewal["eligibleWinBackOfferIds"] = appleOffers }
            return try notifications.body(
                type: "EXPIRED",
                subtype: "VOLUNTARY",
                originalTransactionId: id,
                appAccountToken: nil,
                signedDate: at,
                transactionFields: ["purchaseDate": millis - 30 * 86_400_000, "expiresDate": millis - 60_000],
                dataFields: ["signedRenewalInfo": try ca.sign(json: renewal)],
                status: 2
            )
        }
        func discount(_ id: String, type: String, offerType: Int, offer: String) throws -> Data {
            try notifications.body(
                type: type,
                subtype: type == "SUBSCRIBED" ? "RESUBSCRIBE" : nil,
                originalTransactionId: id,
                appAccountToken: nil,
                signedDate: at.addingTimeInterval(600),
                transactionFields: [
                    "transactionId": "\(id)7", "offerType": offerType, "offerIdentifier": offer, "purchaseDate": millis + 600_000,
                    "expiresDate": millis + 30 * 86_400_000,
                ]
            )
        }
        let bodies = [
            try lapse("6300000000000001", appleOffers: ["APPLE-WINBACK"]),
            try lapse("6300000000000002", appleOffers: []),
            try discount("6300000000000001", type: "SUBSCRIBED", offerType: 4, offer: "APPLE-WINBACK"),
            try discount("6300000000000003", type: "DID_RENEW", offerType: 5, offer: "ASC-RETENTION"),
            try discount("6300000000000004", type: "SUBSCRIBED", offerType: 3, offer: "PARTNER-CODES"),
        ]
        try await withTestDatabase { client, url in
            let dependencies = try Dependencies.test(postgres: client, config: config)
            try await processNotifications(
                bodies,
                client: client,
                dependencies: dependencies
            )
            var decided: [String: String] = [:]
            for try await (campaign, id, outcome, listed) in try await client.query(
                "SELECT campaign_id, original_transaction_id, outcome, apple_win_back_listed FROM reclaim.campaign_decisions",
                logger: Self.logger
            ).decode((String, String, String, Bool?).self) {
                decided["\(campaign) \(id)"] = "\(outcome) \(listed.map(String.init) ?? "nil")"
            }
            #expect(
                decided == [
                    "aside 6300000000000001": "skipped true", "beside 6300000000000001": "offered true",
                    "aside 6300000000000002": "offered false", "beside 6300000000000002": "skipped false",
                ],
                "\(decided)"
            )

            let text = try await CampaignTasks.report(campaign: nil, environment: "Sandbox", json: false, url: url, logger: Self.logger)
            #expect(text.contains("Which door won back whom"), "\(text)")
            #expect(
                text.contains("aside [\(app)]: offered 1, redeemed 0; Apple listed win-back offers at 1 of its 2 decisions, stood aside at 1"),
                "\(text)"
            )
            #expect(
                text.contains("beside [\(app)]: offered 1, redeemed 0; Apple listed win-back offers at 1 of its 2 decisions, stood aside at 0"),
                "\(text)"
            )
            #expect(text.contains("Apple's win-back offers (offerType 4) [\(app)]: redeemed 1"), "\(text)")
            #expect(text.contains("App Store Connect's retention offers (offerType 5) [\(app)]: redeemed 1"), "\(text)")
            #expect(text.contains("offer codes Reclaim did not give (offerType 3) [\(app)]: redeemed 1"), "\(text)")

            let json = try await CampaignTasks.report(campaign: nil, environment: "Sandbox", json: true, url: url, logger: Self.logger)
            let rows = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
            let doors = rows.filter { $0["kind"] as? String == "door" }
            #expect(
                Set(doors.compactMap { $0["door"] as? String }) == [
                    "campaign", "apple_win_back", "app_store_connect_retention", "offer_code_outside_reclaim",
                ]
            )
            #expect(doors.first { $0["door"] as? String == "apple_win_back" }?["subscribersRedeemed"] as? Int == 1)
        }
    }
}
