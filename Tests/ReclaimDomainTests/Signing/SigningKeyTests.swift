import Crypto
import Foundation
import ReclaimDomain
import ReclaimTestSupport
import Testing

/// Loading subscription keys: the formats App Store Connect and openssl produce, and a precise error for
/// everything else that never repeats key material.
@Suite(.poolWatchdog) struct SigningKeyTests {
    static let expectedScalar = SigningFixtures.p256ScalarHex

    private func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

    private func load(
        _ contents: Data,
        keyId: String = SigningFixtures.keyId,
        source: String = "keys/AuthKey_TEST.p8"
    ) throws(KeyLoadingError) -> SigningKey {
        try SigningKey.load(keyId: keyId, contents: contents, source: source)
    }

    @Test func loadsAppStoreConnectP8() throws {
        let key = try load(Data(SigningFixtures.p256PKCS8.utf8))
        #expect(key.keyId == SigningFixtures.keyId)
        #expect(hex(key.privateKey.rawRepresentation) == Self.expectedScalar)
        // The public key matches what openssl derived from the same file.
        #expect(key.publicKey.pemRepresentation + "\n" == SigningFixtures.p256Public)
    }

    @Test(arguments: [
        ("SEC1 PEM", Data(SigningFixtures.p256SEC1.utf8)),
        ("PKCS#8 DER", SigningFixtures.der(SigningFixtures.p256PKCS8)),
        ("SEC1 DER", SigningFixtures.der(SigningFixtures.p256SEC1)),
        (
            "SEC1 after EC PARAMETERS",
            Data(("-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n" + SigningFixtures.p256SEC1).utf8)
        ),
        ("CRLF line endings", Data(SigningFixtures.p256PKCS8.replacingOccurrences(of: "\n", with: "\r\n").utf8)),
        ("one line, as pasted into a secret store", Data(SigningFixtures.p256PKCS8.replacingOccurrences(of: "\n", with: "").utf8)),
        ("literal \\n escapes", Data(SigningFixtures.p256PKCS8.replacingOccurrences(of: "\n", with: "\\n").utf8)),
        ("no trailing newline, leading blank lines", Data(("\n\n" + SigningFixtures.p256PKCS8.trimmingCharacters(in: .newlines)).utf8)),
    ])
    func loadsOtherLayoutsOfTheSameKey(layout: String, contents: Data) throws {
        let key = try load(contents)
        #expect(hex(key.privateKey.rawRepresentation) == Self.expectedScalar, "\(layout)")
    }

    @Test func exportsPKCS8ThatOpenSSLAndPythonRead() async throws {
        let key = SigningKey.generate(keyId: "DEMOKEY001")
        #expect(key.pkcs8PEM.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        let reloaded = try load(Data(key.pkcs8PEM.utf8), keyId: "DEMOKEY001")
        #expect(reloaded.privateKey.rawRepresentation == key.privateKey.rawRepresentation)
        try await ExternalTools.withTemporaryDirectory { directory in
            let path = try ExternalTools.write(Data(key.pkcs8PEM.utf8), to: "demo.p8", in: directory)
            let text = try await ExternalTools.openssl(["pkey", "-in", path, "-text", "-noout"], in: directory)
            #expect(text.contains("prime256v1") || text.contains("P-256"))
            let out = try await ExternalTools.python(
                """
                import sys
                from cryptography.hazmat.primitives import serialization
                from cryptography.hazmat.primitives.asymmetric import ec
                key = serialization.load_pem_private_key(open(sys.argv[1], "rb").read(), password=None)
                assert isinstance(key.curve, ec.SECP256R1), key.curve
                print(format(key.private_numbers().private_value, "064x"))
                """,
                [path],
                in: directory
            )
            #expect(out.trimmingCharacters(in: .whitespacesAndNewlines) == hex(key.privateKey.rawRepresentation))
        }
    }

    @Test func fingerprintMatchesOpenSSL() async throws {
        let key = try SigningFixtures.signingKey()
        let fingerprint = try await ExternalTools.withTemporaryDirectory { directory in
            let path = try ExternalTools.write(Data(SigningFixtures.p256PKCS8.utf8), to: "key.p8", in: directory)
            try await ExternalTools.openssl(["pkey", "-in", path, "-pubout", "-outform", "DER", "-out", "pub.der"], in: directory)
            return try await ExternalTools.openssl(["dgst", "-sha256", "-r", "pub.der"], in: directory)
        }
        #expect(fingerprint.hasPrefix(key.publicKeyFingerprint + " "))
    }

    @Test func descriptionsNeverShowThePrivateKey() throws {
        let key = try SigningFixtures.signingKey()
        var dumped = ""
        dump(key, to: &dumped)
        let renderings = [key.description, key.debugDescription, "\(key)", String(reflecting: key), dumped, "\([key])"]
        let secrets =
            SigningFixtures.bodyLines(SigningFixtures.p256PKCS8) + [
                Self.expectedScalar, Self.expectedScalar.uppercased(), key.privateKey.rawRepresentation.base64EncodedString(),
            ]
        for text in renderings {
            #expect(text.contains(SigningFixtures.keyId))
            #expect(text.contains(key.publicKeyFingerprint))
            for secret in secrets {
                #expect(!text.contains(secret), "rendering leaks key material: \(text)")
            }
        }
    }

    @Test(
        arguments: [
            ("empty", Data(), KeyLoadingError.Code.empty),
            ("whitespace", Data(" \n\t\n".utf8), .empty),
            ("text", Data("hello, this is not a key\n".utf8), .notAKey),
            ("binary garbage", Data([0x00, 0xff, 0x13, 0x37, 0x42]), .notAKey),
            ("DER that is not a key", Data([0x30, 0x03, 0x02, 0x01, 0x05]), .notAKey),
            ("truncated DER", SigningFixtures.der(SigningFixtures.p256PKCS8).prefix(40), .notAKey),
            ("PEM without END", Data("-----BEGIN PRIVATE KEY-----\nMIGHAgEA\n".utf8), .notAKey),
            ("certificate only", Data("-----BEGIN CERTIFICATE-----\nMAMCAQU=\n-----END CERTIFICATE-----\n".utf8), .notAKey),
            ("public key PEM", Data(SigningFixtures.p256Public.utf8), .publicKeyOnly),
            ("public key DER", SigningFixtures.der(SigningFixtures.p256Public), .publicKeyOnly),
            ("RSA PKCS#8", Data(SigningFixtures.rsaPKCS8.utf8), .rsaKey),
            ("RSA PKCS#8 DER", SigningFixtures.der(SigningFixtures.rsaPKCS8), .rsaKey),
            ("RSA PKCS#1", Data(SigningFixtures.rsaPKCS1.utf8), .rsaKey),
            ("RSA PKCS#1 DER", SigningFixtures.der(SigningFixtures.rsaPKCS1), .rsaKey),
            ("secp256k1 PKCS#8", Data(SigningFixtures.secp256k1PKCS8.utf8), .wrongCurve),
            ("secp256k1 SEC1", Data(SigningFixtures.secp256k1SEC1.utf8), .wrongCurve),
            ("P-384 PKCS#8", Data(SigningFixtures.p384PKCS8.utf8), .wrongCurve),
            ("Ed25519", Data(SigningFixtures.ed25519PKCS8.utf8), .unsupportedAlgorithm),
            ("encrypted PKCS#8", Data(SigningFixtures.p256EncryptedPKCS8.utf8), .encryptedKey),
            ("encrypted PKCS#8 DER", SigningFixtures.der(SigningFixtures.p256EncryptedPKCS8), .encryptedKey),
            ("legacy encrypted SEC1", Data(SigningFixtures.p256EncryptedSEC1.utf8), .encryptedKey),
            ("bad base64 in PEM", Data("-----BEGIN PRIVATE KEY-----\nMIGH*AgEA\n-----END PRIVATE KEY-----\n".utf8), .malformed),
        ] as [(String, Data, KeyLoadingError.Code)]
    )
    func refusesWithThePreciseCode(name: String, contents: Data, code: KeyLoadingError.Code) {
        let source = "/etc/reclaim/keys/\(name.replacingOccurrences(of: " ", with: "_")).p8"
        #expect {
            try load(contents, source: source)
        } throws: { error in
            guard let error = error as? KeyLoadingError else { return false }
            #expect(error.code == code, "\(name): \(error)")
            #expect(error.source == source)
            #expect(error.description.contains(source))
            assertNoKeyMaterial(in: error.description, contents: contents)
            return error.code == code
        }
    }

    @Test func namesTheCurveItFound() throws {
        for (pem, curve) in [(SigningFixtures.secp256k1PKCS8, "secp256k1"), (SigningFixtures.p384PKCS8, "P-384")] {
            #expect {
                try load(Data(pem.utf8))
            } throws: { error in
                (error as? KeyLoadingError)?.description.contains(curve) == true
            }
        }
    }

    @Test func refusesAMismatchedEmbeddedPublicKey() throws {
        // Flip one bit in the public point of the SEC1 key; the scalar stays valid.
        var der = SigningFixtures.der(SigningFixtures.p256SEC1)
        der[der.count - 1] ^= 0x01
        #expect(throws: KeyLoadingError.self) { try load(der) }
        do {
            _ = try load(der)
        } catch {
            #expect(error.code == .malformed)
        }
    }

    @Test(arguments: ["", "RECLAIM01", "RECLAIM0011", "reclaim001", "RECLAIM-01", "RECLAIM 01", "RÉCLAIM001", "RECLAIM001\n"])
    func refusesBadKeyIds(keyId: String) {
        do {
            _ = try load(Data(SigningFixtures.p256PKCS8.utf8), keyId: keyId, source: "AuthKey.p8")
            Issue.record("accepted key id \(keyId.debugDescription)")
        } catch {
            #expect(error.code == .invalidKeyId)
            #expect(error.description.contains("AuthKey.p8"))
        }
    }

    /// Xcode's Subscription Offers Key (StoreKit testing in the Simulator) has an id App Store Connect's format
    /// refuses: taken when the config says the key is Xcode's, and the refusal of the other says so.
    @Test func takesXcodeKeyIdsOnlyAsXcodes() throws {
        let contents = Data(SigningFixtures.p256PKCS8.utf8)
        let key = try SigningKey.load(keyId: "BD3A7A04", contents: contents, source: "SubscriptionKey_BD3A7A04.p8", origin: .xcode)
        #expect(key.keyId == "BD3A7A04")
        do {
            _ = try SigningKey.load(keyId: "BD3A7A04", contents: contents, source: "SubscriptionKey_BD3A7A04.p8")
            Issue.record("App Store Connect's format took an 8-character id")
        } catch {
            #expect(error.code == .invalidKeyId)
            #expect(error.description.contains("xcode: true"))
        }
        for bad in ["", "BD3A-7A04", String(repeating: "A", count: 33), "BD3A7A04\n"] {
            #expect(throws: KeyLoadingError.self) { try SigningKey.load(keyId: bad, contents: contents, source: "k.p8", origin: .xcode) }
        }
    }

    @Test func doesNotEchoKeyMaterialPassedAsKeyId() {
        // Arguments swapped by mistake: the "key id" is the key itself.
        do {
            _ = try load(Data(SigningFixtures.p256PKCS8.utf8), keyId: SigningFixtures.p256PKCS8, source: "AuthKey.p8")
            Issue.record("accepted a PEM as key id")
        } catch {
            #expect(error.code == .invalidKeyId)
            assertNoKeyMaterial(in: error.description, contents: Data(SigningFixtures.p256PKCS8.utf8))
        }
    }

    /// No base64 line of a PEM, no base64 of the DER, no hex of the scalar.
    private func assertNoKeyMaterial(in text: String, contents: Data, sourceLocation: SourceLocation = #_sourceLocation) {
        var secrets = [contents.base64EncodedString(), Self.expectedScalar]
        if let pem = String(data: contents, encoding: .utf8) {
            secrets += SigningFixtures.bodyLines(pem)
        }
        for secret in secrets where secret.count > 8 {
            #expect(!text.contains(secret), "message leaks key material: \(text)", sourceLocation: sourceLocation)
        }
    }
}
