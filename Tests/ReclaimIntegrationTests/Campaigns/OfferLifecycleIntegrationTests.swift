import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import ReclaimDomain
import ReclaimService
import ReclaimStore
import ReclaimTestSupport
import SwiftASN1
import Testing
import X509

@Suite("Offers are redeemed and withdrawn by the notifications that follow them", .poolWatchdog)
struct OfferLifecycleIntegrationTests {
    let logger = TestPostgres.logger

    @Test(
        "a purchase with the offer redeems it with price and currency; another promotional offer is recorded as not issued; auto-renew back on withdraws"
    )
    func redeemAndWithdraw() async throws {
        let ca = try TestCertificateAuthority()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reclaim-lifecycle-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try ca.root.serializeAsPEM().pemString.write(to: directory.appendingPathComponent("root.pem"), atomically: true, encoding: .utf8)
        try SigningKey.generate(keyId: "LIFEKEY001").pkcs8PEM.write(to: directory.appendingPathComponent("key.p8"), atomically: true, encoding: .utf8)
        let config = try ReclaimConfig.parse(
            yaml: """
                apps:
                  - bundleId: com.example.app
                    appAppleId: 1234567890
                    environments: [Sandbox]
                    issuerId: 11111111-2222-3333-4444-555555555555
                    signingKeys: [{keyId: LIFEKEY001, file: \(directory.path)/key.p8}]
                    rootCertificates: [\(directory.path)/root.pem]
                campaigns:
                  - {id: retain, app: com.example.app, trigger: DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED,
                     offer: {productId: com.example.monthly, offerIdentifier: RETAIN50}}
                """
        )
        let notifications = TestNotifications(ca: ca)
        let start = Date()
        @Sendable func at(_ seconds: Double) -> Date { start.addingTimeInterval(seconds) }
        try await withTestDatabase { client, _ in
            let dependencies = try Dependencies.test(postgres: client, config: config)
            // Subscriber X turns auto-renew off, then resubscribes with the offer, then renews with an offer Reclaim never issued.
            // Subscriber Y turns auto-renew off, then back on.
            try await processNotifications(
                [
                    try notifications.body(originalTransactionId: "X", signedDate: at(0)),
                    try notifications.body(originalTransactionId: "Y", appAccountToken: UUID(), signedDate: at(0)),
                ],
                client: client,
                dependencies: dependencies
            )
            try await processNotifications(
                [
                    try notifications.body(
                        type: "SUBSCRIBED",
                        subtype: "RESUBSCRIBE",
                        originalTransactionId: "X",
                        signedDate: at(1),
                        transactionFields: ["transactionId": "X-2", "offerType": 2, "offerIdentifier": "RETAIN50", "price": 4990, "currency": "USD"]
                    ),
                    try notifications.body(subtype: "AUTO_RENEW_ENABLED", originalTransactionId: "Y", appAccountToken: UUID(), signedDate: at(1)),
                ],
                client: client,
                dependencies: dependencies
            )
            try await processNotifications(
                [
                    try notifications.body(
                        type: "DID_RENEW",
                        subtype: nil,
                        originalTransactionId: "X",
                        signedDate: at(2),
                        transactionFields: ["transactionId": "X-3", "offerType": 2, "offerIdentifier": "ELSEWHERE", "price": 990, "currency": "USD"]
                    )
                ],
                client: client,
                dependencies: dependencies
            )
            let offers = try await client.query(
                "SELECT original_transaction_id, state, redeemed_transaction_id, redeemed_price, redeemed_currency, end_reason FROM reclaim.offers ORDER BY 1",
                logger: logger
            )
            var seen: [String] = []
            for try await (otid, state, transaction, price, currency, reason) in offers.decode(
                (String, String, String?, Int64?, String?, String?).self
            ) {
                seen.append("\(otid) \(state) \(transaction ?? "-") \(price.map(String.init) ?? "-") \(currency ?? "-") \(reason ?? "-")")
            }
            #expect(seen == ["X redeemed X-2 4990 USD -", "Y withdrawn - - - the subscriber turned auto-renew back on without the offer"])
            let redemptions = try await client.query(
                "SELECT transaction_id, offer_identifier, offer_id IS NOT NULL FROM reclaim.offer_redemptions ORDER BY redeemed_at, transaction_id",
                logger: logger
            )
            var recorded: [String] = []
            for try await (transaction, offer, issued) in redemptions.decode((String, String, Bool).self) {
                recorded.append("\(transaction) \(offer) \(issued)")
            }
            #expect(recorded == ["X-2 RETAIN50 true", "X-3 ELSEWHERE false"])
        }
    }

    @Test("with 20,000 live offers, the refresher's and the expiry sweep's queries read their partial indexes, never the whole table")
    func refresherUsesItsIndex() async throws {
        try await withTestDatabase { client, _ in
            try await client.query(
                """
                WITH n AS (
                    INSERT INTO reclaim.notifications (notification_uuid, notification_type, bundle_id, environment, signed_date, signed_payload)
                    SELECT gen_random_uuid(), 'DID_CHANGE_RENEWAL_STATUS', 'b', 'Sandbox', now(), 'x' FROM generate_series(1, 20000)
                    RETURNING notification_uuid),
                d AS (
                    INSERT INTO reclaim.campaign_decisions (id, campaign_id, bundle_id, environment, original_transaction_id, notification_uuid,
                                                            triggered_at, outcome, reason)
                    SELECT gen_random_uuid(), 'c', 'b', 'Sandbox', notification_uuid::text, notification_uuid, now(), 'offered', 'r' FROM n
                    RETURNING id, original_transaction_id)
                INSERT INTO reclaim.offers (id, decision_id, bundle_id, environment, original_transaction_id, campaign_id, triggered_at, priority,
                                            product_id, offer_identifier, key_id, nonce, signed_at, application_username, storekit1_signature,
                                            storekit2_jws, deliverable_until)
                SELECT gen_random_uuid(), id, 'b', 'Sandbox', original_transaction_id, 'c', now(), 0, 'p', 'o', 'k', gen_random_uuid(),
                       now() - random() * interval '11 hours', '', 's', 'j', now() + random() * interval '7 days'
                FROM d
                """,
                logger: logger
            )
            try await client.query("ANALYZE reclaim.offers", logger: logger)
            for (name, query) in [
                (
                    "offers_refresh_idx",
                    "SELECT id FROM reclaim.offers WHERE state IN ('ready', 'delivered') AND signed_at < now() - interval '12 hours' ORDER BY signed_at LIMIT 500"
                ),
                (
                    "offers_expiry_idx",
                    "SELECT id FROM reclaim.offers WHERE state IN ('ready', 'delivered') AND deliverable_until <= now() ORDER BY deliverable_until LIMIT 500"
                ),
            ] {
                var plan = ""
                for try await line in try await client.query(PostgresQuery(unsafeSQL: "EXPLAIN " + query), logger: logger).decode(String.self) {
                    plan += line + "\n"
                }
                // An index scan in order, or a bitmap scan of the few rows due: either way the index bounds the work.
                #expect(plan.contains("Index Scan using \(name)") || plan.contains("Bitmap Index Scan on \(name)"), "\(plan)")
                #expect(!plan.contains("Seq Scan"), "\(plan)")
            }
        }
    }
}
