import Crypto
import Foundation
import ReclaimDomain
import ReclaimTestSupport
import Testing
import X509

/// What scripts/check-apple-library found Reclaim judging otherwise than Apple's own library (app-store-server-library
/// 3.1.2 with PyJWT 2.15.1), each fixed to Apple's verdict.
@Suite(.poolWatchdog) struct AppleLibraryParityTests {
    private func code(_ jws: String, _ verifier: AppleJWSVerifier) async -> JWSVerificationError.Code? {
        do {
            _ = try await verifier.verify(jws)
            return nil
        } catch {
            return error.code
        }
    }

    private func payload(_ extra: [String: Any] = [:]) -> [String: Any] {
        var payload: [String: Any] = [
            "notificationType": "TEST", "notificationUUID": UUID().uuidString.lowercased(), "version": "2.0",
            "signedDate": Int64(Date().timeIntervalSince1970 * 1000),
            "data": ["bundleId": "com.example.app", "environment": "Sandbox"],
        ]
        payload.merge(extra) { $1 }
        return payload
    }

    @Test("a signature whose last base64url character has its unused bits set is refused: one JWS, one spelling")
    func unusedBitsInTheSignature() async throws {
        let jws = try AppleSandboxFixtures.first("DID_RENEW").signedPayload
        // 64 bytes encode as 86 characters: the last one carries 2 bits of data and 4 unused bits.
        let last = try #require(jws.last)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let value = try #require(alphabet.firstIndex(of: last))
        #expect(value & 0x0F == 0, "Apple's own signature is canonical")
        let respelled = String(jws.dropLast()) + String(alphabet[value | 0x01])
        #expect(await code(jws, AppleJWSVerifier()) == nil)
        #expect(await code(respelled, AppleJWSVerifier()) == .malformed)
        #expect(Base64URL.decode("AA") == Data([0]) && Base64URL.decode("AB") == nil)
        #expect(Base64URL.decode("AAA") == Data([0, 0]) && Base64URL.decode("AAB") == nil)
    }

    @Test("registered claims are refused as PyJWT refuses them: exp passed, nbf or iat ahead, an audience, a sub or jti not a string")
    func registeredClaims() async throws {
        let ca = try TestCertificateAuthority()
        let verifier = AppleJWSVerifier(trustedRoots: [ca.root])
        let now = Int64(Date().timeIntervalSince1970)
        let refused: [[String: Any]] = [
            ["exp": now - 60], ["exp": "\(now - 60)"], ["exp": "soon"], ["nbf": now + 3600], ["iat": now + 3600],
            ["aud": "com.example.app"], ["aud": ["a"]], ["sub": 5], ["jti": ["x"]], ["iat": NSNull()],
        ]
        for extra in refused {
            #expect(await code(try ca.sign(json: payload(extra)), verifier) == .malformed, "\(extra)")
        }
        let accepted: [[String: Any]] = [
            ["exp": now + 3600], ["nbf": now - 60], ["iat": now - 60], ["aud": ""], ["aud": [String]()], ["aud": NSNull()],
            ["sub": "someone"], ["jti": "id"], ["data": ["exp": now - 60]],
        ]
        for extra in accepted {
            #expect(await code(try ca.sign(json: payload(extra)), verifier) == nil, "\(extra)")
        }
        // A key spelled with an escape is the same key.
        let header = try JSONSerialization.data(withJSONObject: ["alg": "ES256", "x5c": try ca.x5c()])
        let text = #"{"notificationType":"TEST","signedDate":\#(now * 1000),"\u0065xp":\#(now - 60)}"#
        let jws = try TestCertificateAuthority.signCompact(headerJSON: header, payload: Data(text.utf8), key: ca.leafKey)
        #expect(await code(jws, verifier) == .malformed)
    }

    @Test("a trusted root re-issued after the chain it signed was made still vouches for payloads signed while all three are valid")
    func rootYoungerThanTheChain() async throws {
        let ca = try TestCertificateAuthority()
        let now = Date()
        let reissued = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(ca.rootKey.publicKey),
            notValidBefore: now.addingTimeInterval(-86_400 * 10),
            notValidAfter: now.addingTimeInterval(86_400 * 3650),
            issuer: ca.root.subject,
            subject: ca.root.subject,
            signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            },
            issuerPrivateKey: Certificate.PrivateKey(ca.rootKey)
        )
        #expect(reissued.notValidBefore > ca.leaf.notValidBefore)
        let verifier = AppleJWSVerifier(trustedRoots: [reissued])
        #expect(await code(try ca.sign(json: payload()), verifier) == nil)
        // Beside Apple's own root, whose name the test CA copies and whose notBefore (2014) is the earlier one.
        let beside = AppleJWSVerifier(trustedRoots: [AppleJWSVerifier.appleRootCAG3, reissued])
        #expect(await code(try ca.sign(json: payload()), beside) == nil)
        // Signed before the re-issued root was valid: refused, as Apple's library refuses it.
        let early = payload(["signedDate": Int64(now.addingTimeInterval(-86_400 * 20).timeIntervalSince1970 * 1000)])
        #expect(await code(try ca.sign(json: early), verifier) == .chainExpired)
    }
}
