import Crypto
import Foundation
import ReclaimDomain
import ReclaimTestSupport
import Testing
import X509

/// Every way a forged or broken JWS is refused, each with its own code.
@Suite(.poolWatchdog) struct JWSRejectionTests {
    /// The code `verify` fails with, or `nil` when it succeeds.
    private func failure(_ jws: String, verifier: AppleJWSVerifier = AppleJWSVerifier()) async -> JWSVerificationError.Code? {
        do {
            _ = try await verifier.verify(jws)
            return nil
        } catch {
            #expect(!error.reason.isEmpty)
            return error.code
        }
    }

    private func segments(_ jws: String) -> [String] { jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init) }

    private func testPayload(signedDate: Date = Date()) -> [String: Any] {
        [
            "notificationType": "TEST", "notificationUUID": UUID().uuidString.lowercased(), "version": "2.0",
            "signedDate": Int64(signedDate.timeIntervalSince1970 * 1000),
            "data": ["bundleId": "com.example.app", "environment": "Sandbox"],
        ]
    }

    // MARK: Tampering with a real notification

    @Test func tamperedHeaderIsRefused() async throws {
        let parts = segments(try AppleSandboxFixtures.first("DID_RENEW").signedPayload)
        // A header that still parses and still carries Apple's chain, but is not the one Apple signed.
        let headerJSON = try #require(Base64URL.decode(parts[0]))
        var header = try #require(try JSONSerialization.jsonObject(with: headerJSON) as? [String: Any])
        header["kid"] = "forged"
        let forgedHeader = Base64URL.encode(try JSONSerialization.data(withJSONObject: header))
        #expect(await failure([forgedHeader, parts[1], parts[2]].joined(separator: ".")) == .invalidSignature)
    }

    @Test func flippedByteInPayloadIsRefused() async throws {
        let parts = segments(try AppleSandboxFixtures.first("DID_RENEW").signedPayload)
        var payload = try #require(Base64URL.decode(parts[1]))
        // Flip a bit inside the notificationUUID value: still valid JSON, so only the signature can catch it.
        let marker = Data("\"notificationUUID\":\"".utf8)
        let range = try #require(payload.range(of: marker))
        payload[range.upperBound] ^= 0x01
        #expect(await failure([parts[0], Base64URL.encode(payload), parts[2]].joined(separator: ".")) == .invalidSignature)
    }

    @Test func flippedByteInSignatureIsRefused() async throws {
        let parts = segments(try AppleSandboxFixtures.first("DID_RENEW").signedPayload)
        var signature = try #require(Base64URL.decode(parts[2]))
        signature[10] ^= 0x01
        #expect(await failure([parts[0], parts[1], Base64URL.encode(signature)].joined(separator: ".")) == .invalidSignature)
    }

    @Test(arguments: [0, 1, 2])
    func flippedCharacterInAnySegmentIsRefused(segment: Int) async throws {
        let parts = segments(try AppleSandboxFixtures.first("EXPIRED").signedPayload)
        let verifier = AppleJWSVerifier()
        var text = Array(parts[segment].utf8)
        // Several positions across the segment: whatever a flip breaks (JSON, base64, DER, chain, signature), it must fail.
        for position in stride(from: 3, to: text.count - 1, by: max(1, text.count / 7)) {
            let original = text[position]
            text[position] = original == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            var tampered = parts
            tampered[segment] = String(decoding: text, as: UTF8.self)
            #expect(await failure(tampered.joined(separator: "."), verifier: verifier) != nil, "segment \(segment) position \(position)")
            text[position] = original
        }
    }

    @Test func wrongNumberOfSegmentsIsMalformed() async throws {
        let parts = segments(try AppleSandboxFixtures.first("TEST").signedPayload)
        #expect(await failure(parts[0] + "." + parts[1]) == .malformed)
        #expect(await failure(parts.joined(separator: ".") + "." + parts[2]) == .malformed)
        #expect(await failure(parts[0] + ".." + parts[2]) == .malformed)
        #expect(await failure("") == .malformed)
        #expect(await failure("not a jws") == .malformed)
    }

    @Test func garbageBase64IsRefused() async throws {
        let parts = segments(try AppleSandboxFixtures.first("TEST").signedPayload)
        #expect(await failure(["!!!", parts[1], parts[2]].joined(separator: ".")) == .malformed)
        #expect(await failure([parts[0], "%%%", parts[2]].joined(separator: ".")) == .malformed)
        #expect(await failure([parts[0], parts[1], "***"].joined(separator: ".")) == .malformed)
        // A header that is base64url but not JSON.
        #expect(await failure([Base64URL.encode(Data("hello".utf8)), parts[1], parts[2]].joined(separator: ".")) == .malformed)
        // A signature of the wrong length (DER instead of r‖s, say).
        #expect(await failure([parts[0], parts[1], Base64URL.encode(Data(repeating: 1, count: 70))].joined(separator: ".")) == .invalidSignature)
    }

    @Test func garbageInX5CIsRefused() async throws {
        let ca = try TestCertificateAuthority()
        let verifier = AppleJWSVerifier(trustedRoots: [ca.root])
        var x5c = try ca.x5c()
        x5c[1] = "@@not base64@@"
        #expect(await failure(try ca.sign(json: testPayload(), header: ["x5c": x5c]), verifier: verifier) == .invalidCertificate)
        x5c = try ca.x5c()
        x5c[0] = Data("not a certificate".utf8).base64EncodedString()
        #expect(await failure(try ca.sign(json: testPayload(), header: ["x5c": x5c]), verifier: verifier) == .invalidCertificate)
        // base64url is not what x5c uses.
        x5c = try ca.x5c().map { $0.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_") }
        if x5c != (try ca.x5c()) {
            #expect(await failure(try ca.sign(json: testPayload(), header: ["x5c": x5c]), verifier: verifier) == .invalidCertificate)
        }
    }

    // MARK: Algorithm confusion

    @Test func algNoneIsRefused() async throws {
        let ca = try TestCertificateAuthority()
        let verifier = AppleJWSVerifier(trustedRoots: [ca.root])
        let signed = segments(try ca.sign(json: testPayload(), header: ["alg": "none"]))
        #expect(await failure(signed.joined(separator: "."), verifier: verifier) == .unsupportedAlgorithm)
        // The unsecured form, with no signature at all.
        #expect(await failure(signed[0] + "." + signed[1] + ".", verifier: verifier) == .malformed)
    }

    @Test func hmacIsRefused() async throws {
        let ca = try TestCertificateAuthority()
        let verifier = AppleJWSVerifier(trustedRoots: [ca.root])
        // The classic confusion: an HMAC keyed with the leaf's public key bytes.
        let header = try JSONSerialization.data(withJSONObject: ["alg": "HS256", "x5c": try ca.x5c()])
        let input = Base64URL.encode(header) + "." + Base64URL.encode(try JSONSerialization.data(withJSONObject: testPayload()))
        let mac = HMAC<SHA256>.authenticationCode(
            for: Data(input.utf8),
            using: SymmetricKey(data: ca.leafKey.publicKey.derRepresentation)
        )
        #expect(await failure(input + "." + Base64URL.encode(Data(mac)), verifier: verifier) == .unsupportedAlgorithm)
    }

    @Test(arguments: ["ES384", "RS256", "es256", "ES256 ", "PS256", "EdDSA"])
    func otherAlgorithmsAreRefused(alg: String) async throws {
        let ca = try TestCertificateAuthority()
        let jws = try ca.sign(json: testPayload(), header: ["alg": alg])
        #expect(await failure(jws, verifier: AppleJWSVerifier(trustedRoots: [ca.root])) == .unsupportedAlgorithm)
    }

    @Test func missingAlgIsRefused() async throws {
        let ca = try TestCertificateAuthority()
        let header = try JSONSerialization.data(withJSONObject: ["x5c": try ca.x5c()])
        let jws = try TestCertificateAuthority.signCompact(
            headerJSON: header,
            payload: try JSONSerialization.data(withJSONObject: testPayload()),
            key: ca.leafKey
        )
        #expect(await failure(jws, verifier: AppleJWSVerifier(trustedRoots: [ca.root])) == .unsupportedAlgorithm)
    }

    @Test func criticalHeaderParametersAreRefused() async throws {
        let ca = try TestCertificateAuthority()
        let jws = try ca.sign(json: testPayload(), header: ["crit": ["exp"]])
        #expect(await failure(jws, verifier: AppleJWSVerifier(trustedRoots: [ca.root])) == .malformed)
    }

    // MARK: Chains

    @Test func selfMadeCACopyingApplesRootNameIsRefused() async throws {
        let ca = try TestCertificateAuthority()
        #expect(ca.root.subject == AppleJWSVerifier.appleRootCAG3.subject)
        #expect(await failure(try ca.sign(json: testPayload())) == .invalidChain)
    }

    @Test func selfMadeCAIsAcceptedWhenItsRootIsTrusted() async throws {
        let ca = try TestCertificateAuthority()
        let payload = testPayload()
        let verifier = AppleJWSVerifier(trustedRoots: [AppleJWSVerifier.appleRootCAG3, ca.root])
        let verified = try await verifier.verifyNotification(try ca.sign(json: payload))
        #expect(verified.payload.notificationUUID == payload["notificationUUID"] as? String)
        #expect(verified.payload.bundleId == "com.example.app")
        // And Apple's real payloads still verify with the same verifier.
        _ = try await verifier.verifyNotification(try AppleSandboxFixtures.first("TEST").signedPayload)
    }

    @Test func anotherCAsIntermediateIsRefused() async throws {
        let trusted = try TestCertificateAuthority()
        let other = try TestCertificateAuthority()
        // Trusted leaf and root, but the intermediate of another CA: the leaf was not issued by it.
        let x5c = try [trusted.leaf, other.intermediate, trusted.root].map { try TestCertificateAuthority.der($0).base64EncodedString() }
        let jws = try trusted.sign(json: testPayload(), header: ["x5c": x5c])
        #expect(await failure(jws, verifier: AppleJWSVerifier(trustedRoots: [trusted.root])) == .invalidChain)
    }

    @Test func x5cRootIsNeverTrustedEvenWhenTheRealRootIsConfigured() async throws {
        // A chain whose x5c root is a forgery of Apple's: only the configured root counts, and it did not sign it.
        let ca = try TestCertificateAuthority()
        let x5c = try [ca.leaf, ca.intermediate, ca.root].map { try TestCertificateAuthority.der($0).base64EncodedString() }
        let jws = try ca.sign(json: testPayload(), header: ["x5c": x5c])
        #expect(await failure(jws, verifier: AppleJWSVerifier(trustedRoots: [AppleJWSVerifier.appleRootCAG3])) == .invalidChain)
    }

    @Test func twoCertificatesInX5CAreRefused() async throws {
        let ca = try TestCertificateAuthority()
        let jws = try ca.sign(json: testPayload(), header: ["x5c": Array(try ca.x5c().prefix(2))])
        #expect(await failure(jws, verifier: AppleJWSVerifier(trustedRoots: [ca.root])) == .invalidChain)
        let four = try ca.sign(json: testPayload(), header: ["x5c": try ca.x5c() + [try ca.x5c()[2]]])
        #expect(await failure(four, verifier: AppleJWSVerifier(trustedRoots: [ca.root])) == .invalidChain)
        let null = try ca.sign(json: testPayload(), header: ["x5c": NSNull()])
        #expect(await failure(null, verifier: AppleJWSVerifier(trustedRoots: [ca.root])) == .invalidChain)
        let notAnArray = try ca.sign(json: testPayload(), header: ["x5c": "MIIB"])
        #expect(await failure(notAnArray, verifier: AppleJWSVerifier(trustedRoots: [ca.root])) == .malformed)
    }

    @Test func missingX5CIsRefused() async throws {
        let ca = try TestCertificateAuthority()
        let header = try JSONSerialization.data(withJSONObject: ["alg": "ES256"])
        let jws = try TestCertificateAuthority.signCompact(
            headerJSON: header,
            payload: try JSONSerialization.data(withJSONObject: testPayload()),
            key: ca.leafKey
        )
        #expect(await failure(jws, verifier: AppleJWSVerifier(trustedRoots: [ca.root])) == .invalidChain)
    }

    @Test func chainWithoutLeafMarkerIsRefused() async throws {
        let ca = try TestCertificateAuthority(leafMarker: false)
        #expect(await failure(try ca.sign(json: testPayload()), verifier: AppleJWSVerifier(trustedRoots: [ca.root])) == .missingAppleExtension)
    }

    @Test func chainWithoutIntermediateMarkerIsRefused() async throws {
        let ca = try TestCertificateAuthority(intermediateMarker: false)
        #expect(await failure(try ca.sign(json: testPayload()), verifier: AppleJWSVerifier(trustedRoots: [ca.root])) == .missingAppleExtension)
    }

    @Test func chainOutsideItsValidityAtSignedDateIsRefused() async throws {
        let now = Date()
        let expired = try TestCertificateAuthority(leafValidity: now.addingTimeInterval(-86_400 * 60)...now.addingTimeInterval(-86_400))
        let verifier = AppleJWSVerifier(trustedRoots: [expired.root])
        #expect(await failure(try expired.sign(json: testPayload(signedDate: now)), verifier: verifier) == .chainExpired)
        // The same chain is fine for a payload signed while the leaf was valid.
        _ = try await verifier.verify(try expired.sign(json: testPayload(signedDate: now.addingTimeInterval(-86_400 * 2))))
        // Not yet valid either.
        let future = try TestCertificateAuthority(leafValidity: now.addingTimeInterval(86_400)...now.addingTimeInterval(86_400 * 60))
        #expect(
            await failure(try future.sign(json: testPayload(signedDate: now)), verifier: AppleJWSVerifier(trustedRoots: [future.root]))
                == .chainExpired
        )
    }

    @Test func payloadWithoutSignedDateIsCheckedAtTheInjectedClock() async throws {
        let now = Date()
        let ca = try TestCertificateAuthority(leafValidity: now.addingTimeInterval(-86_400 * 60)...now.addingTimeInterval(-86_400))
        var payload = testPayload()
        payload["signedDate"] = nil
        let jws = try ca.sign(json: payload)
        let past = now.addingTimeInterval(-86_400 * 2)
        let verified = try await AppleJWSVerifier(trustedRoots: [ca.root], clock: { past }).verify(jws)
        #expect(verified.validationTime == past)
        #expect(await failure(jws, verifier: AppleJWSVerifier(trustedRoots: [ca.root], clock: { now })) == .chainExpired)
    }

    @Test func payloadThatIsNotANotificationIsMalformed() async throws {
        let ca = try TestCertificateAuthority()
        let verifier = AppleJWSVerifier(trustedRoots: [ca.root])
        let jws = try ca.sign(json: ["signedDate": Int64(Date().timeIntervalSince1970 * 1000), "hello": "world"])
        await #expect(throws: JWSVerificationError.self) { _ = try await verifier.verifyNotification(jws) }
        do {
            _ = try await verifier.verifyNotification(jws)
        } catch {
            #expect(error.code == .malformed)
            #expect(error.reason.contains("notificationType"))
        }
    }

    @Test func forgedNestedTransactionIsRefused() async throws {
        // An outer payload signed by a trusted CA carrying a transaction signed by an untrusted one.
        let trusted = try TestCertificateAuthority()
        let untrusted = try TestCertificateAuthority()
        let transaction = try untrusted.sign(json: ["bundleId": "com.example.app", "signedDate": Int64(Date().timeIntervalSince1970 * 1000)])
        var payload = testPayload()
        payload["notificationType"] = "SUBSCRIBED"
        payload["data"] = ["bundleId": "com.example.app", "environment": "Sandbox", "signedTransactionInfo": transaction]
        let verifier = AppleJWSVerifier(trustedRoots: [trusted.root])
        let jws = try trusted.sign(json: payload)
        do {
            _ = try await verifier.verifyNotification(jws)
            Issue.record("a forged nested transaction was accepted")
        } catch {
            #expect(error.code == .invalidChain)
            #expect(error.reason.hasPrefix("signedTransactionInfo: "))
        }
    }
}
