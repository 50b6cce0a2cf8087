import Foundation
import ReclaimDomain
import ReclaimTestSupport
import Testing

@Suite("Envelope verification: the outer signature only, nested payloads decoded")
struct EnvelopeTests {
    @Test("on every real notification it decodes exactly what full verification decodes")
    func sameAsFull() async throws {
        let verifier = AppleJWSVerifier()
        for notification in try AppleSandboxFixtures.all() {
            let full = try await verifier.verifyNotification(notification.signedPayload)
            let envelope = try await verifier.verifyNotificationEnvelope(notification.signedPayload)
            #expect(envelope == full, "\(notification.name)")
        }
    }

    @Test("a forged outer signature is refused; a bad nested signature is left to full verification")
    func whatItChecks() async throws {
        let ca = try TestCertificateAuthority()
        let verifier = AppleJWSVerifier(trustedRoots: [ca.root])
        let now = Int64(Date().timeIntervalSince1970 * 1000)  // inside the test CA's validity
        let transaction = try ca.sign(json: ["originalTransactionId": "1", "bundleId": "b", "signedDate": now])
        var parts = transaction.split(separator: ".").map(String.init)
        parts[2] = String(parts[2].reversed())
        let badNested = parts.joined(separator: ".")
        let outer = try ca.sign(json: [
            "notificationType": "SUBSCRIBED", "notificationUUID": UUID().uuidString, "signedDate": now,
            "data": ["bundleId": "b", "environment": "Sandbox", "signedTransactionInfo": badNested],
        ])
        let envelope = try await verifier.verifyNotificationEnvelope(outer)
        #expect(envelope.transaction?.originalTransactionId == "1")
        await #expect(throws: JWSVerificationError.self) { try await verifier.verifyNotification(outer) }

        var outerParts = outer.split(separator: ".").map(String.init)
        outerParts[2] = String(outerParts[2].reversed())
        await #expect(throws: JWSVerificationError.self) {
            try await verifier.verifyNotificationEnvelope(outerParts.joined(separator: "."))
        }
    }
}
