import Foundation
import ReclaimDomain
import ReclaimTestSupport
import Testing

@Suite("Roots are trusted per app", .poolWatchdog)
struct RootTrustTests {
    let now = Date()

    func notification(bundleId: String, appAppleId: Int64, ca: TestCertificateAuthority) throws -> String {
        let millis = Int64(now.timeIntervalSince1970 * 1000)
        let transaction = try ca.sign(json: [
            "originalTransactionId": "1", "transactionId": "1", "bundleId": bundleId, "signedDate": millis, "environment": "Sandbox",
        ])
        return try ca.sign(json: [
            "notificationType": "DID_RENEW", "notificationUUID": UUID().uuidString.lowercased(), "version": "2.0", "signedDate": millis,
            "data": ["bundleId": bundleId, "appAppleId": appAppleId, "environment": "Sandbox", "signedTransactionInfo": transaction],
        ])
    }

    func realtimeRequest(appAppleId: Int64, ca: TestCertificateAuthority) throws -> String {
        try ca.sign(
            RealtimeRequest(
                originalTransactionId: "1",
                appAppleId: appAppleId,
                productId: "p",
                userLocale: "en-US",
                requestIdentifier: UUID().uuidString.lowercased(),
                signedDate: Int64(now.timeIntervalSince1970 * 1000),
                environment: .sandbox
            )
        )
    }

    @Test("a root configured for app A verifies A's payloads and is refused for app B's, by bundleId or by appAppleId")
    func perAppRoots() async throws {
        let caA = try TestCertificateAuthority()
        let trust = RootTrust(
            everyApp: [AppleJWSVerifier.appleRootCAG3],
            perApp: [
                .init(bundleId: "com.example.a", appAppleId: 1, roots: [caA.root]),
                .init(bundleId: "com.example.b", appAppleId: 2, roots: []),
            ]
        )
        let verifier = AppleJWSVerifier(trust: trust)
        _ = try await verifier.verifyNotification(try notification(bundleId: "com.example.a", appAppleId: 1, ca: caA))
        _ = try await verifier.verifyNotificationEnvelope(try notification(bundleId: "com.example.a", appAppleId: 1, ca: caA))
        for forged in [try notification(bundleId: "com.example.b", appAppleId: 2, ca: caA)] {
            for verify in [verifier.verifyNotification, verifier.verifyNotificationEnvelope] {
                let error = await #expect(throws: JWSVerificationError.self) { _ = try await verify(forged) }
                #expect(error?.code == .invalidChain)
                #expect(error?.reason.contains("not trusted for com.example.b") == true, "\(String(describing: error))")
            }
        }
        _ = try await verifier.verifyRealtimeRequest(try realtimeRequest(appAppleId: 1, ca: caA))
        let error = await #expect(throws: JWSVerificationError.self) {
            _ = try await verifier.verifyRealtimeRequest(try realtimeRequest(appAppleId: 2, ca: caA))
        }
        #expect(error?.code == .invalidChain)
    }

    @Test("no payload byte is read before the signature verified: a forged JWS whose signedDate is outside the chain's validity is a bad signature")
    func signatureBeforePayload() async throws {
        let ca = try TestCertificateAuthority(leafValidity: now.addingTimeInterval(-86_400)...now.addingTimeInterval(86_400))
        let verifier = AppleJWSVerifier(trustedRoots: [ca.root])
        let late = try ca.sign(json: ["signedDate": Int64(now.addingTimeInterval(86_400 * 30).timeIntervalSince1970 * 1000)])
        // Genuine but signed outside the chain's validity: refused for the time, once authenticated.
        let expired = await #expect(throws: JWSVerificationError.self) { _ = try await verifier.verify(late) }
        #expect(expired?.code == .chainExpired)
        // The same with a forged signature: refused for the signature; its signedDate was never looked at.
        let parts = late.split(separator: ".")
        let forged = "\(parts[0]).\(parts[1]).\(String(repeating: "A", count: 86))"
        for verify in [verifier.verify, { try await verifier.verifyDecoded($0, as: NotificationPayload.self).verified }] {
            let error = await #expect(throws: JWSVerificationError.self) { _ = try await verify(forged) }
            #expect(error?.code == .invalidSignature)
        }
        // Malformed payload bytes under a forged signature: a signature error, not a parse error.
        let garbage = "\(parts[0]).\(Base64URL.encode(Array("{\"signedDate\": [[[".utf8))).\(String(repeating: "A", count: 86))"
        let error = await #expect(throws: JWSVerificationError.self) { _ = try await verifier.verifyDecoded(garbage, as: NotificationPayload.self) }
        #expect(error?.code == .invalidSignature)
    }
}
