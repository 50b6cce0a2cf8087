import Crypto
import Foundation
import ReclaimDomain
import ReclaimTestSupport
import Testing

/// The byte-level segment decoding, seen through `verify`.
@Suite(.poolWatchdog) struct JWSSegmentTests {
    @Test func payloadsOfEveryLengthRoundTrip() async throws {
        let ca = try TestCertificateAuthority()
        let verifier = AppleJWSVerifier(trustedRoots: [ca.root])
        // The core does not need JSON (without a signedDate the clock decides), so any bytes will do: every length
        // modulo 3, and 0xFB / 0xFF runs so that the encoding uses "-" and "_".
        var alphabet = Set<Character>()
        for length in 1..<40 {
            let payload = Data((0..<length).map { $0 % 2 == 0 ? 0xFB : UInt8.random(in: 0...255) | 0xF0 })
            let jws = try ca.sign(payload: payload)
            alphabet.formUnion(jws.split(separator: ".")[1])
            let verified = try await verifier.verify(jws)
            #expect(verified.payload == payload)
        }
        #expect(alphabet.contains("-") && alphabet.contains("_"))
    }

    @Test func paddedSegmentsAreAccepted() async throws {
        let ca = try TestCertificateAuthority()
        let header = try JSONSerialization.data(withJSONObject: ["alg": "ES256", "x5c": try ca.x5c()])
        let payload = Data("{\"signedDate\":\(Int64(Date().timeIntervalSince1970 * 1000)),\"x\":1}".utf8)
        func padded(_ data: Data) -> String {
            let text = Base64URL.encode(data)
            return text + String(repeating: "=", count: (4 - text.count % 4) % 4)
        }
        let input = padded(header) + "." + padded(payload)
        let signature = try ca.leafKey.signature(for: Data(input.utf8)).rawRepresentation
        let verified = try await AppleJWSVerifier(trustedRoots: [ca.root]).verify(input + "." + padded(signature))
        #expect(verified.payload == payload)
    }

    @Test func standardAlphabetAndWhitespaceAreRefused() async throws {
        let parts = try AppleSandboxFixtures.first("TEST").signedPayload.split(separator: ".").map(String.init)
        let verifier = AppleJWSVerifier()
        for bad in ["+", "/", " ", "\n", "=A"] {
            let payload = String(parts[1].dropLast(2)) + bad
            let error = await #expect(throws: JWSVerificationError.self) {
                _ = try await verifier.verify([parts[0], payload, parts[2]].joined(separator: "."))
            }
            #expect(error?.code == .malformed, "\(bad.debugDescription)")
        }
        // A remainder of one character cannot be base64.
        let error = await #expect(throws: JWSVerificationError.self) {
            _ = try await verifier.verify([parts[0], parts[1] + "AAAAA", parts[2]].joined(separator: "."))
        }
        #expect(error?.code == .malformed)
    }

    @Test func aKnownHeaderDoesNotSkipAnyCheck() async throws {
        // After Apple's header has verified once (and is remembered), forgeries reusing it still fail.
        let fixture = try AppleSandboxFixtures.first("DID_RENEW")
        let verifier = AppleJWSVerifier()
        _ = try await verifier.verify(fixture.signedPayload)
        let parts = fixture.signedPayload.split(separator: ".").map(String.init)

        var signature = try #require(Base64URL.decode(parts[2]))
        signature[0] ^= 0x80
        let badSignature = await #expect(throws: JWSVerificationError.self) {
            _ = try await verifier.verify([parts[0], parts[1], Base64URL.encode(signature)].joined(separator: "."))
        }
        #expect(badSignature?.code == .invalidSignature)

        var payload = try #require(Base64URL.decode(parts[1]))
        payload[payload.count - 2] ^= 0x01
        let badPayload = await #expect(throws: JWSVerificationError.self) {
            _ = try await verifier.verify([parts[0], Base64URL.encode(payload), parts[2]].joined(separator: "."))
        }
        #expect(badPayload?.code == .invalidSignature)

        let late = await #expect(throws: JWSVerificationError.self) {
            _ = try await verifier.verify(fixture.signedPayload, validationTime: { _ in Date(timeIntervalSince1970: 1_900_000_000) })
        }
        #expect(late?.code == .chainExpired)
    }
}
