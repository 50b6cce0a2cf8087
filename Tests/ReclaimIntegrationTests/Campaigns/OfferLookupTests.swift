import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import ReclaimClient
import ReclaimDomain
import ReclaimService
import ReclaimStore
import ReclaimTestSupport
import Testing

@Suite("POST /v1/offers/lookup: offers for a subscriber proven by an Apple-signed transaction, over a real socket", .poolWatchdog)
struct OfferLookupTests {
    let logger = TestPostgres.logger
    /// A subscriber of the corpus's app whose purchases carry no appAccountToken.
    static let tokenless = "2000000000000777"

    /// The lookup's answer: `GET /v1/offers`'s offers, for a proven subscription.
    struct Answer: Decodable {
        let originalTransactionId: String
        let appAccountToken: String?
        let offers: [OfferDeliveryTests.Answer.Offer]
    }

    /// The first `signedTransactionInfo` of the real sandbox corpus: signed by Apple in July 2025.
    static func appleSignedTransaction() throws -> String {
        struct Payload: Decodable {
            struct Data: Decodable { let signedTransactionInfo: String? }
            let data: Data
        }
        for notification in try AppleSandboxFixtures.all() {
            let segment = String(notification.signedPayload.split(separator: ".")[1])
            let payload = try JSONDecoder().decode(Payload.self, from: try #require(Base64URL.decode(segment)))
            if let transaction = payload.data.signedTransactionInfo { return transaction }
        }
        throw PythonCrossCheck.Failure(description: "no signedTransactionInfo in the corpus")
    }

    @Test(
        "a subscriber without an appAccountToken gets its offer; another app's, another environment's or a forged transaction is 401 with a reason"
    )
    func lookup() async throws {
        // Its leaf is valid from 90 days ago, as Apple's are valid for long: a transaction signed 40 days ago verifies.
        let ca = try TestCertificateAuthority(leafValidity: Date().addingTimeInterval(-90 * 86_400)...Date().addingTimeInterval(365 * 86_400))
        let setup = try CampaignTestSetup(extraApps: "  - {bundleId: com.example.other, environments: [Sandbox]}", ca: ca)
        defer { setup.remove() }
        try await withProcessedCorpus(setup) { client, dependencies in
            // A lapse of a subscriber the app never gave an appAccountToken: the win-back campaign issues an offer.
            let notifications = TestNotifications(ca: ca, bundleId: "GeniusParentingAI", environment: "Sandbox", appAppleId: 6_747_332_178)
            let lapse = try notifications.body(type: "EXPIRED", subtype: "VOLUNTARY", originalTransactionId: Self.tokenless, appAccountToken: nil)
            try await processNotifications([lapse], client: client, dependencies: dependencies)

            @Sendable func transaction(
                bundleId: String = "GeniusParentingAI",
                environment: String = "Sandbox",
                originalTransactionId: String = Self.tokenless,
                signer: TestCertificateAuthority = ca
            ) throws -> String {
                try signer.sign(json: [
                    "originalTransactionId": originalTransactionId, "transactionId": originalTransactionId, "bundleId": bundleId,
                    "productId": "ca.geniusparentingai.basic.monthly", "environment": environment,
                    "signedDate": Int64(Date().timeIntervalSince1970 * 1000) - 40 * 86_400_000, "type": "Auto-Renewable Subscription",
                ])
            }

            let keys = TestKeys(client: client)
            let appKey = try await keys.create(scope: .app, bundleId: "GeniusParentingAI", logger: logger)
            let otherKey = try await keys.create(scope: .app, bundleId: "com.example.other", logger: logger)
            let app = Application(router: buildRouter(dependencies), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.live) { http in
                func post(_ body: String, key: String?, contentType: String = "application/json") async throws -> (HTTPResponse, String) {
                    var headers: HTTPFields = [.contentType: contentType]
                    if let key { headers[.authorization] = "Bearer \(key)" }
                    return try await http.execute(uri: "/v1/offers/lookup", method: .post, headers: headers, body: ByteBuffer(string: body)) {
                        ($0.head, String(buffer: $0.body))
                    }
                }
                func lookup(_ jws: String, key: String? = appKey) async throws -> (HTTPResponse, String) {
                    try await post(String(decoding: try JSONEncoder().encode(["signedTransaction": jws]), as: UTF8.self), key: key)
                }

                // The tokenless subscriber, proven by a transaction signed 40 days ago: its offer, with an empty
                // applicationUsername, both signatures verified by Python's cryptography over Apple's exact payload.
                let (response, body) = try await lookup(try transaction())
                #expect(response.status == .ok, "\(body)")
                #expect(response.headerFields[.cacheControl] == "no-store")
                let answer = try JSONDecoder().decode(Answer.self, from: Data(body.utf8))
                #expect(answer.originalTransactionId == Self.tokenless)
                #expect(answer.appAccountToken == nil)
                let offer = try #require(answer.offers.first)
                #expect(answer.offers.count == 1)
                #expect(offer.offerIdentifier == "WINBACK30")
                #expect(offer.storeKit1.applicationUsername == "")
                let checked = try await PythonCrossCheck.verify(
                    [
                        .init(
                            payload: [
                                "GeniusParentingAI", offer.storeKit1.keyIdentifier, offer.productIdentifier, offer.offerIdentifier, "",
                                offer.storeKit1.nonce, String(offer.storeKit1.timestamp),
                            ].joined(separator: "\u{2063}"),
                            signature: offer.storeKit1.signature,
                            jws: offer.storeKit2.compactJWS,
                            expectedClaims: [
                                "nonce": offer.storeKit1.nonce, "offerIdentifier": "WINBACK30", "transactionId": Self.tokenless,
                                "bid": "GeniusParentingAI",
                            ]
                        )
                    ],
                    publicKeyPEM: setup.key.publicKey.pemRepresentation,
                    keyId: "TESTKEY001"
                )
                #expect(checked == 1)

                // A real transaction Apple signed in July 2025: its age is no reason to refuse; the corpus
                // subscriber's offer comes back, with the appAccountToken the transaction carries.
                let (realResponse, realBody) = try await lookup(try Self.appleSignedTransaction())
                #expect(realResponse.status == .ok, "\(realBody)")
                let real = try JSONDecoder().decode(Answer.self, from: Data(realBody.utf8))
                #expect(real.originalTransactionId == "2000000970472825")
                #expect(real.appAccountToken == "00000000-0000-0000-0000-000000000051")
                #expect(real.offers.map(\.offerIdentifier) == ["WINBACK30"])

                // Refusals: 401 invalid-transaction, each with its reason.
                var tampered = try transaction().split(separator: ".").map(String.init)
                tampered[1] = Base64URL.encode(Data(#"{"originalTransactionId":"2000000970472825","bundleId":"GeniusParentingAI"}"#.utf8))
                for (jws, key, reason) in [
                    (try transaction(), otherKey, "not of this app key's app com.example.other"),
                    (try transaction(bundleId: "com.example.other"), appKey, "not one Apple signed"),
                    (try transaction(environment: "Production"), appKey, "environment Production, which app GeniusParentingAI does not accept"),
                    (try transaction(signer: try TestCertificateAuthority()), appKey, "not one Apple signed"),
                    (tampered.joined(separator: "."), appKey, "not one Apple signed"),
                ] {
                    let (refused, problem) = try await lookup(jws, key: key)
                    #expect(refused.status == .unauthorized, "\(problem)")
                    #expect(refused.headerFields[.contentType] == "application/problem+json")
                    #expect(problem.contains("urn:reclaim:problem:invalid-transaction") && problem.contains(reason), "\(problem)")
                }
                // A transaction Apple's chain signed whose originalTransactionId holds NUL: 400 naming the field (it reached
                // PostgreSQL and came back as 503 before).
                let (nul, nulProblem) = try await lookup(try transaction(originalTransactionId: "2000\u{0}0001"))
                #expect(nul.status == .badRequest, "\(nulProblem)")
                #expect(
                    nulProblem.contains("urn:reclaim:problem:invalid-text") && nulProblem.contains("originalTransactionId holds"),
                    "\(nulProblem)"
                )
                // Bad requests, and the app key still comes first.
                #expect(try await post(#"{"signedTransaction": "not a jws"}"#, key: appKey).0.status == .badRequest)
                #expect(try await post(#"{"transaction": "a.b.c"}"#, key: appKey).1.contains("urn:reclaim:problem:invalid-body"))
                #expect(try await post("{", key: appKey).0.status == .badRequest)
                #expect(try await post(#"{"signedTransaction": "a.b.c"}"#, key: appKey, contentType: "text/plain").0.status == .unsupportedMediaType)
                #expect(try await lookup(try transaction(), key: nil).0.status == .unauthorized)

                // The client, as an app without appAccountTokens uses it.
                let base = URL(string: "http://127.0.0.1:\(try #require(http.port))")!
                let offers = try await ReclaimClient(baseURL: base, appKey: appKey).pendingOffers(signedTransaction: try transaction())
                #expect(offers.map(\.offerIdentifier) == ["WINBACK30"])
                #expect(try StoreKitPromotionalOffer(try #require(offers.first)).appAccountToken == nil)
            }
        }
    }
}
