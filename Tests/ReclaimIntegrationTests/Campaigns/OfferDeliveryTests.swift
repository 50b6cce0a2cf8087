import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import ReclaimDomain
import ReclaimService
import ReclaimStore
import ReclaimTestSupport
import Testing

@Suite("GET /v1/offers over a real socket", .poolWatchdog)
struct OfferDeliveryTests {
    let logger = TestPostgres.logger

    struct Answer: Decodable {
        struct Offer: Decodable {
            struct StoreKit2: Decodable { let compactJWS: String }
            let id: String
            let campaign: String
            let productIdentifier: String
            let offerIdentifier: String
            let storeKit1: StoreKit1OfferSignature
            let storeKit2: StoreKit2
            let expiresAt: String
        }
        let appAccountToken: String
        let offers: [Offer]
    }

    @Test("the key's app only, fresh signatures that verify, a new nonce on every delivery, 401 and 400 as problem+json")
    func delivery() async throws {
        let setup = try CampaignTestSetup(extraApps: "  - {bundleId: com.example.other, environments: [Sandbox]}")
        defer { setup.remove() }
        try await withProcessedCorpus(setup) { client, dependencies in
            let keys = TestKeys(client: client)
            let appKey = try await keys.create(scope: .app, bundleId: "GeniusParentingAI", logger: logger)
            let otherKey = try await keys.create(scope: .app, bundleId: "com.example.other", logger: logger)
            let adminKey = try await keys.create(scope: .admin, bundleId: nil, logger: logger)
            let revokedKey = try await keys.create(scope: .app, bundleId: "GeniusParentingAI", name: "old", logger: logger)
            let revokedId = try #require(try await keys.list(bundleId: "GeniusParentingAI", logger: logger).first { $0.name == "old" }?.id)
            #expect(try await keys.revoke(id: revokedId, logger: logger))
            #expect(try await !keys.revoke(id: revokedId, logger: logger))
            let subscriber = "/v1/offers?appAccountToken=00000000-0000-0000-0000-000000000051"

            let app = Application(router: buildRouter(dependencies), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.live) { http in
                func get(_ uri: String, key: String?) async throws -> (HTTPResponse, String) {
                    var headers = HTTPFields()
                    if let key { headers[.authorization] = "Bearer \(key)" }
                    return try await http.execute(uri: uri, method: .get, headers: headers) { ($0.head, String(buffer: $0.body)) }
                }
                for key in [nil, adminKey, revokedKey, "rk_app_not-a-key", String(repeating: "x", count: 5000)] {
                    let (response, body) = try await get(subscriber, key: key)
                    #expect(response.status == .unauthorized)
                    #expect(response.headerFields[.contentType] == "application/problem+json")
                    #expect(response.headerFields[.wwwAuthenticate]?.hasPrefix("Bearer") == true)
                    #expect(body.contains("urn:reclaim:problem:unauthorized"))
                }
                let (bad, badBody) = try await get("/v1/offers?appAccountToken=not-a-uuid", key: appKey)
                #expect(bad.status == .badRequest)
                #expect(badBody.contains("urn:reclaim:problem:invalid-parameter"))
                let (missing, _) = try await get("/v1/offers", key: appKey)
                #expect(missing.status == .badRequest)

                // Another app's key sees nothing of this app's subscriber; an unknown subscriber gets an empty list.
                for (uri, key) in [(subscriber, otherKey), ("/v1/offers?appAccountToken=\(UUID())", appKey)] {
                    let (response, body) = try await get(uri, key: key)
                    #expect(response.status == .ok)
                    #expect(try JSONDecoder().decode(Answer.self, from: Data(body.utf8)).offers.isEmpty)
                }

                var nonces = Set<String>()
                for uppercase in [false, true, false] {
                    let uri =
                        uppercase
                        ? subscriber.uppercased().replacingOccurrences(of: "/V1/OFFERS?APPACCOUNTTOKEN", with: "/v1/offers?appAccountToken")
                        : subscriber
                    let (response, body) = try await get(uri, key: appKey)
                    #expect(response.status == .ok)
                    #expect(response.headerFields[.cacheControl] == "no-store")
                    let answer = try JSONDecoder().decode(Answer.self, from: Data(body.utf8))
                    #expect(answer.appAccountToken == "00000000-0000-0000-0000-000000000051")
                    let offer = try #require(answer.offers.first)
                    #expect(answer.offers.count == 1)
                    #expect(offer.campaign == "winback-expired")
                    #expect(offer.offerIdentifier == "WINBACK30")
                    #expect(offer.storeKit1.applicationUsername == "00000000-0000-0000-0000-000000000051")
                    #expect(setup.signer.verify(offer.storeKit1, product: offer.productIdentifier, offer: offer.offerIdentifier))
                    #expect(abs(Double(offer.storeKit1.timestamp) / 1000 - Date().timeIntervalSince1970) < 3600)
                    #expect(nonces.insert(offer.storeKit1.nonce).inserted, "a nonce was handed out twice")
                    let checked = try await PythonCrossCheck.verify(
                        [
                            .init(
                                payload: [
                                    "GeniusParentingAI", offer.storeKit1.keyIdentifier, offer.productIdentifier, offer.offerIdentifier,
                                    offer.storeKit1.applicationUsername, offer.storeKit1.nonce, String(offer.storeKit1.timestamp),
                                ].joined(separator: "\u{2063}"),
                                signature: offer.storeKit1.signature,
                                jws: offer.storeKit2.compactJWS,
                                expectedClaims: ["nonce": offer.storeKit1.nonce, "offerIdentifier": "WINBACK30", "transactionId": "2000000970472825"]
                            )
                        ],
                        publicKeyPEM: setup.key.publicKey.pemRepresentation,
                        keyId: "TESTKEY001"
                    )
                    #expect(checked == 1)
                }
            }
            let rows = try await client.query(
                "SELECT state, delivery_count, signature_delivered FROM reclaim.offers WHERE state IN ('ready', 'delivered')",
                logger: logger
            )
            for try await (state, count, handedOut) in rows.decode((String, Int, Bool).self) {
                #expect(state == "delivered")
                #expect(count == 3)
                #expect(handedOut)
            }
        }
    }

    @Test("offer events over a real socket: recorded once per event, 404 for another app's or an unknown offer, 400 for another event")
    func events() async throws {
        let setup = try CampaignTestSetup(extraApps: "  - {bundleId: com.example.other, environments: [Sandbox]}")
        defer { setup.remove() }
        try await withProcessedCorpus(setup) { client, dependencies in
            let keys = TestKeys(client: client)
            let appKey = try await keys.create(scope: .app, bundleId: "GeniusParentingAI", logger: logger)
            let otherKey = try await keys.create(scope: .app, bundleId: "com.example.other", logger: logger)
            let offerId = try #require(try await OfferRow.all(client).last?.id).uuidString.lowercased()
            let app = Application(router: buildRouter(dependencies), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.live) { http in
                func post(_ id: String, _ event: String, key: String?) async throws -> (HTTPResponse.Status, String) {
                    var headers: HTTPFields = [.contentType: "application/json"]
                    if let key { headers[.authorization] = "Bearer \(key)" }
                    return try await http.execute(
                        uri: "/v1/offers/\(id)/events",
                        method: .post,
                        headers: headers,
                        body: ByteBuffer(string: "{\"event\": \"\(event)\"}")
                    ) { ($0.status, String(buffer: $0.body)) }
                }
                let first = try await post(offerId, "shown", key: appKey)
                #expect(first.0 == .ok && first.1 == #"{"status":"recorded"}"#, "\(first)")
                let again = try await post(offerId, "shown", key: appKey)
                #expect(again.0 == .ok && again.1 == #"{"status":"duplicate"}"#, "\(again)")
                #expect(try await post(offerId, "purchase_started", key: appKey).1 == #"{"status":"recorded"}"#)
                #expect(try await post(offerId, "shown", key: otherKey).0 == .notFound)
                #expect(try await post(UUID().uuidString, "shown", key: appKey).0 == .notFound)
                #expect(try await post("not-an-id", "shown", key: appKey).0 == .notFound)
                #expect(try await post(offerId, "clicked", key: appKey).0 == .badRequest)
                #expect(try await post(offerId, "shown", key: nil).0 == .unauthorized)
            }
            let funnel = try await client.query(
                "SELECT shown FROM reclaim.campaign_funnel WHERE campaign_id = 'winback-expired'",
                logger: logger
            )
            for try await shown in funnel.decode(Int64.self) { #expect(shown == 1) }
        }
    }

    @Test(
        "purchase outcomes: purchase_pending is its own event; purchase_failed stores StoreKit's error; an error with another event, empty, too long or holding NUL is 400"
    )
    func purchaseOutcomeEvents() async throws {
        let setup = try CampaignTestSetup()
        defer { setup.remove() }
        try await withProcessedCorpus(setup) { client, dependencies in
            let appKey = try await TestKeys(client: client).create(scope: .app, bundleId: "GeniusParentingAI", logger: logger)
            let offerId = try #require(try await OfferRow.all(client).last?.id)
            let app = Application(router: buildRouter(dependencies), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.live) { http in
                func post(_ body: String) async throws -> (HTTPResponse.Status, String) {
                    try await http.execute(
                        uri: "/v1/offers/\(offerId.uuidString.lowercased())/events",
                        method: .post,
                        headers: [.contentType: "application/json", .authorization: "Bearer \(appKey)"],
                        body: ByteBuffer(string: body)
                    ) { ($0.status, String(buffer: $0.body)) }
                }
                for (body, problem) in [
                    (#"{"event": "shown", "error": "x"}"#, "invalid-event"),
                    (#"{"event": "purchase_failed", "error": ""}"#, "invalid-event"),
                    (#"{"event": "purchase_failed", "error": "\#(String(repeating: "é", count: 257))"}"#, "invalid-event"),
                    (#"{"event": "purchase_failed", "error": "invalid\u0000offer"}"#, "invalid-text"),
                    (#"{"event": "purchase_failed", "error": 42}"#, "invalid-event"),
                ] {
                    let (status, answer) = try await post(body)
                    #expect(status == .badRequest && answer.contains("urn:reclaim:problem:\(problem)"), "\(body): \(answer)")
                }
                #expect(try await post(#"{"event": "purchase_pending"}"#).1 == #"{"status":"recorded"}"#)
                let error = "StoreKit.Product.PurchaseError.invalidOfferIdentifier " + String(repeating: "é", count: 200)
                #expect(try await post(#"{"event": "purchase_failed", "error": "\#(error)"}"#).1 == #"{"status":"recorded"}"#)
                // Once per offer and event: a second failure keeps the first error.
                #expect(try await post(#"{"event": "purchase_failed", "error": "another"}"#).1 == #"{"status":"duplicate"}"#)
                let rows = try await client.query(
                    "SELECT event, purchase_error FROM reclaim.offer_events WHERE offer_id = \(offerId) ORDER BY event",
                    logger: logger
                )
                var stored: [String: String?] = [:]
                for try await (event, purchaseError) in rows.decode((String, String?).self) { stored[event] = purchaseError }
                #expect(stored == ["purchase_failed": error, "purchase_pending": nil])
            }
        }
    }

    @Test("the refresher re-signs offers whose signatures are old and expires those past their window")
    func refresher() async throws {
        let setup = try CampaignTestSetup()
        defer { setup.remove() }
        try await withProcessedCorpus(setup) { client, dependencies in
            let before = try #require(try await OfferRow.all(client).last)
            try await client.query("UPDATE reclaim.offers SET signed_at = now() - interval '13 hours' WHERE id = \(before.id)", logger: logger)
            let refresher = OfferRefresher(
                postgres: client,
                issuer: OfferIssuer(signers: dependencies.signers, policy: SignaturePolicy(resignAfter: 12 * 3600)),
                interval: .seconds(60),
                logger: logger
            )
            #expect(try await refresher.tick() == (0, 1))
            let after = try #require(try await OfferRow.all(client).last)
            #expect(after.nonce != before.nonce)
            #expect(abs(after.signedAt.timeIntervalSinceNow) < 60)
            #expect(
                setup.signer.verify(
                    StoreKit1OfferSignature(
                        keyIdentifier: after.keyId,
                        nonce: after.nonce.uuidString.lowercased(),
                        timestamp: Int64((after.signedAt.timeIntervalSince1970 * 1000).rounded()),
                        signature: after.storeKit1Signature,
                        applicationUsername: after.applicationUsername
                    ),
                    product: after.productId,
                    offer: after.offerIdentifier
                )
            )
            #expect(try await refresher.tick() == (0, 0))
            try await client.query(
                "UPDATE reclaim.offers SET deliverable_until = now() - interval '1 second' WHERE id = \(before.id)",
                logger: logger
            )
            #expect(try await refresher.tick() == (1, 0))
            #expect(try #require(try await OfferRow.all(client).last).state == "expired")
        }
    }
}
