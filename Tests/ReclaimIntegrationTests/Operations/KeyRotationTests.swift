import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import ReclaimDomain
import ReclaimService
import ReclaimStore
import ReclaimTestSupport
import Testing

/// docs/operations.md, "Key rotation": list the new key first and keep the old one after it; from the restart on,
/// every signature handed out is made with the new key, including offers pre-signed with the old one.
@Suite("Signing key rotation", .poolWatchdog)
struct KeyRotationTests {
    struct Answer: Decodable {
        struct Offer: Decodable {
            struct StoreKit2: Decodable { let compactJWS: String }
            let productIdentifier: String
            let offerIdentifier: String
            let storeKit1: StoreKit1OfferSignature
            let storeKit2: StoreKit2
        }
        let offers: [Offer]
    }

    @Test("an offer pre-signed with the old key is handed out signed by the new one, verified by Python's cryptography")
    func rotation() async throws {
        let setup = try CampaignTestSetup()
        defer { setup.remove() }
        try await withProcessedCorpus(setup) { client, _ in
            // The live win-back offer was pre-signed with the old key moments ago: fresh and never delivered.
            let before = try await OfferRow.all(client).filter { $0.state == "ready" }
            #expect(before.map(\.keyId) == ["TESTKEY001"])

            let newKey = SigningKey.generate(keyId: "TESTKEY002")
            let newKeyFile = setup.directory.appendingPathComponent("new-key.p8")
            try Data(newKey.pkcs8PEM.utf8).write(to: newKeyFile)
            var rotated = setup.config
            rotated.apps[0].signingKeys.insert(.init(keyId: "TESTKEY002", file: newKeyFile.path), at: 0)
            let dependencies = try Dependencies.test(postgres: client, config: rotated)
            #expect(dependencies.signers["GeniusParentingAI"]?.key.keyId == "TESTKEY002")

            let appKey = try await TestKeys(client: client).create(scope: .app, bundleId: "GeniusParentingAI", logger: TestPostgres.logger)
            let app = Application(router: buildRouter(dependencies))
            let answer = try await app.test(.router) { http in
                try await http.execute(
                    uri: "/v1/offers?appAccountToken=00000000-0000-0000-0000-000000000051",
                    method: .get,
                    headers: [.authorization: "Bearer \(appKey)"]
                ) { response in
                    #expect(response.status == .ok)
                    return try JSONDecoder().decode(Answer.self, from: Data(String(buffer: response.body).utf8))
                }
            }
            let offer = try #require(answer.offers.first)
            #expect(offer.storeKit1.keyIdentifier == "TESTKEY002")
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
                publicKeyPEM: newKey.publicKey.pemRepresentation,
                keyId: "TESTKEY002"
            )
            #expect(checked == 1)
            // The stored row now holds the new key's signature: the old key signs nothing from here on.
            #expect(try await OfferRow.all(client).filter { $0.state == "delivered" }.map(\.keyId) == ["TESTKEY002"])
        }
    }
}
