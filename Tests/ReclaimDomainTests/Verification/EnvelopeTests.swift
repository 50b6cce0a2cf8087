import Foundation
import ReclaimDomain
import ReclaimTestSupport
import Testing

@Suite("Envelope verification: the outer signature only, nested payloads decoded", .poolWatchdog)
struct EnvelopeTests {
    @Test("on every real notification it decodes the outer payload and the nested identity fields as full verification does")
    func sameAsFull() async throws {
        let verifier = AppleJWSVerifier()
        for notification in try AppleSandboxFixtures.all() {
            let full = try await verifier.verifyNotification(notification.signedPayload)
            let envelope = try await verifier.verifyNotificationEnvelope(notification.signedPayload)
            let name = notification.name
            #expect(envelope.payload == full.payload, "\(name)")
            #expect(envelope.payloadJSON == full.payloadJSON && envelope.transactionJSON == full.transactionJSON, "\(name)")
            #expect(envelope.renewalInfoJSON == full.renewalInfoJSON, "\(name)")
            #expect((envelope.transaction == nil) == (full.transaction == nil) && (envelope.renewalInfo == nil) == (full.renewalInfo == nil))
            #expect(envelope.originalTransactionId == full.originalTransactionId && envelope.appAccountToken == full.appAccountToken, "\(name)")
            let (transaction, fullTransaction) = (envelope.transaction, full.transaction)
            #expect(transaction?.transactionId == fullTransaction?.transactionId && transaction?.productId == fullTransaction?.productId)
            #expect(transaction?.bundleId == fullTransaction?.bundleId && transaction?.environment == fullTransaction?.environment)
            #expect(envelope.renewalInfo?.environment == full.renewalInfo?.environment, "\(name)")
            #expect(envelope.renewalInfo?.originalTransactionId == full.renewalInfo?.originalTransactionId, "\(name)")
            // The identity is all it decodes: a field ingest never reads stays nil.
            #expect(transaction?.purchaseDate == nil && envelope.renewalInfo?.autoRenewStatus == nil, "\(name)")
        }
    }

    @Test("a forged outer signature is refused; a bad nested signature is left to full verification")
    func whatItChecks() async throws {
        let ca = try TestCertificateAuthority()
        let verifier = AppleJWSVerifier(trustedRoots: [ca.root])
        let now = Int64(Date().timeIntervalSince1970 * 1000)  // inside the test CA's validity
        let transaction = try ca.sign(json: ["originalTransactionId": "1", "bundleId": "b", "signedDate": now])
        var parts = transaction.split(separator: ".").map(String.init)
        // Another first character: still canonical base64url (all six bits of it are data), no longer the signature.
        parts[2] = (parts[2].first == "A" ? "B" : "A") + parts[2].dropFirst()
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
