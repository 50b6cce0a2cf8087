import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import ReclaimDomain
import ReclaimService
import ReclaimStore
import ReclaimTestSupport
import SwiftASN1
import Testing
import X509

@Suite("POST /v1/apple/retention-messaging over a real socket", .poolWatchdog)
struct RetentionMessagingTests {
    @Test("the subscriber's live offer with its campaign's message; the app's default message otherwise; {} for an unknown app; 401 forged")
    func answers() async throws {
        let ca = try TestCertificateAuthority()
        // A second app trusts the same test root but accepts Production only: a Sandbox request for it matches no app.
        let rootFile = FileManager.default.temporaryDirectory.appendingPathComponent("reclaim-retention-root-\(UUID().uuidString.prefix(8)).pem")
        try ca.root.serializeAsPEM().pemString.write(to: rootFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: rootFile) }
        let setup = try CampaignTestSetup(
            extraApps: "  - {bundleId: com.example.other, appAppleId: 99, environments: [Production], rootCertificates: [\(rootFile.path)]}",
            ca: ca,
            settings: ""
        )
        defer { setup.remove() }
        @Sendable func request(
            originalTransactionId: String,
            appAppleId: Int64 = 6_747_332_178,
            signer: TestCertificateAuthority? = nil
        ) throws -> String {
            let jws = try (signer ?? ca).sign(
                RealtimeRequest(
                    originalTransactionId: originalTransactionId,
                    appAppleId: appAppleId,
                    productId: "ca.geniusparentingai.basic.monthly",
                    userLocale: "en-US",
                    requestIdentifier: UUID().uuidString.lowercased(),
                    signedDate: Int64(Date().timeIntervalSince1970 * 1000),
                    environment: .sandbox
                )
            )
            return "{\"signedPayload\": \"\(jws)\"}"
        }
        try await withProcessedCorpus(setup) { client, dependencies in
            let app = Application(router: buildRouter(dependencies), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.live) { http in
                func post(_ body: String) async throws -> (HTTPResponse.Status, String) {
                    try await http.execute(
                        uri: "/v1/apple/retention-messaging",
                        method: .post,
                        headers: [.contentType: "application/json"],
                        body: ByteBuffer(string: body)
                    ) { ($0.status, String(buffer: $0.body)) }
                }
                let (status, body) = try await post(try request(originalTransactionId: "2000000970472825"))
                #expect(status == .ok)
                let answer = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
                let offer = try #require(answer["promotionalOffer"] as? [String: String], "\(body)")
                #expect(answer.count == 1)
                #expect(offer["messageIdentifier"] == "winback-message")
                let claims = try await PythonCrossCheck.claimsWithPyJWT(
                    try #require(offer["promotionalOfferSignatureV2"]),
                    publicKeyPEM: setup.key.publicKey.pemRepresentation
                )
                #expect(claims["transactionId"] as? String == "2000000970472825")
                #expect(claims["offerIdentifier"] as? String == "WINBACK30")
                #expect(claims["productId"] as? String == "ca.geniusparentingai.basic.monthly")
                #expect(claims["bid"] as? String == "GeniusParentingAI")
                #expect(claims["iss"] as? String == CampaignTestSetup.issuerId)

                let unknown = try await post(try request(originalTransactionId: "1999999999999999"))
                #expect(unknown.0 == .ok && unknown.1 == #"{"message":{"messageIdentifier":"default-message"}}"#, "\(unknown)")
                let noApp = try await post(try request(originalTransactionId: "2000000970472825", appAppleId: 99))
                #expect(noApp.0 == .ok && noApp.1 == "{}", "\(noApp)")
                let otherApp = try await post(try request(originalTransactionId: "2000000970472825", appAppleId: 42))
                #expect(otherApp.0 == .unauthorized, "a root configured for one app does not vouch for another: \(otherApp)")
                let forged = try await post(try request(originalTransactionId: "2000000970472825", signer: try TestCertificateAuthority()))
                #expect(forged.0 == .unauthorized)
                #expect(forged.1.contains("urn:reclaim:problem:untrusted-certificate-chain"))
                let malformed = try await post("{\"nope\": 1}")
                #expect(malformed.0 == .badRequest)

                // A grant supersedes the campaign's offer. With a message of its own it is offered in Apple's sheet
                // with that message; before, the request was answered with the default message (the grant had none).
                let admin = try await TestKeys(client: client).create(scope: .admin, bundleId: nil, logger: TestPostgres.logger)
                func grant(_ key: String, campaign: String, message: String?) async throws -> HTTPResponse.Status {
                    var body: [String: String] = [
                        "bundleId": "GeniusParentingAI", "originalTransactionId": "2000000970472825",
                        "productId": "ca.geniusparentingai.basic.monthly",
                        "offerIdentifier": "REFERRAL1", "reason": "referral", "campaign": campaign,
                    ]
                    if let message { body["messageIdentifier"] = message }
                    return try await http.execute(
                        uri: "/v1/grants",
                        method: .post,
                        headers: [.contentType: "application/json", .authorization: "Bearer \(admin)", .init("Idempotency-Key")!: key],
                        body: ByteBuffer(bytes: Array(try JSONSerialization.data(withJSONObject: body)))
                    ) { $0.status }
                }
                #expect(try await grant("g1", campaign: "referrals", message: "referral-message") == .created)
                let granted = try await post(try request(originalTransactionId: "2000000970472825"))
                let grantOffer = try #require(
                    (try JSONSerialization.jsonObject(with: Data(granted.1.utf8)) as? [String: Any])?["promotionalOffer"] as? [String: String],
                    "\(granted)"
                )
                #expect(grantOffer["messageIdentifier"] == "referral-message")
                let grantClaims = try await PythonCrossCheck.claimsWithPyJWT(
                    try #require(grantOffer["promotionalOfferSignatureV2"]),
                    publicKeyPEM: setup.key.publicKey.pemRepresentation
                )
                #expect(grantClaims["offerIdentifier"] as? String == "REFERRAL1")
                // A grant without one, labelled with a configured campaign's id, takes that campaign's message.
                #expect(try await grant("g2", campaign: "winback-expired", message: nil) == .created)
                let labelled = try await post(try request(originalTransactionId: "2000000970472825"))
                #expect(labelled.1.contains(#""messageIdentifier":"winback-message""#), "\(labelled)")
            }
        }
    }
}
