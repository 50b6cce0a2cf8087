import Crypto
import Foundation
import ReclaimDomain
import ReclaimTestSupport
import Testing

/// StoreKit 1 signatures, checked by openssl and by Python's `cryptography`, which share no code with swift-crypto's
/// Swift layer: if they accept the DER signature over our payload bytes, Apple's verifier will too.
@Suite(.poolWatchdog) struct StoreKit1OfferSignerTests {
    static let cases: [(String, OfferSignatureRequest)] = [
        ("ascii", OfferSignatureRequestTests.request()),
        ("non-ascii", OfferSignatureRequestTests.request(product: "com.example.pro.über", offer: "réduction-50-🎉", username: "user-42")),
        ("appAccountToken", OfferSignatureRequestTests.request(username: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")),
    ]

    @Test(arguments: cases)
    func verifiesWithOpenSSLAndPython(name: String, request: OfferSignatureRequest) async throws {
        let key = try SigningFixtures.signingKey()
        let signed = try StoreKit1OfferSigner.sign(request, with: key)
        #expect(signed.keyIdentifier == SigningFixtures.keyId)
        #expect(signed.nonce == "6ba7b810-9dad-41d1-80b4-00c04fd430c8")
        #expect(signed.timestamp == request.timestamp)
        #expect(signed.applicationUsername == request.renderedApplicationUsername)
        // Standard base64, not base64url: Apple decodes it with the standard alphabet.
        let der = try #require(Data(base64Encoded: signed.signature), "signature is not standard base64")
        #expect(der.first == 0x30, "signature is not DER")
        #expect(StoreKit1OfferSigner.verify(payload: try request.payload(), signature: signed.signature, publicKey: key.publicKey))

        try await ExternalTools.withTemporaryDirectory { directory in
            let keyPath = try ExternalTools.write(Data(SigningFixtures.p256PKCS8.utf8), to: "key.p8", in: directory)
            // The public key comes from openssl, not from the code under test.
            try await ExternalTools.openssl(["pkey", "-in", keyPath, "-pubout", "-out", "pub.pem"], in: directory)
            try ExternalTools.write(try request.payload(), to: "payload.bin", in: directory)
            try ExternalTools.write(der, to: "sig.der", in: directory)
            try ExternalTools.write(Data(signed.signature.utf8), to: "sig.b64", in: directory)

            let openssl = try await ExternalTools.openssl(
                ["dgst", "-sha256", "-verify", "pub.pem", "-signature", "sig.der", "payload.bin"],
                in: directory
            )
            #expect(openssl.contains("Verified OK"), "\(name): openssl said \(openssl)")

            let python = try await ExternalTools.python(
                """
                import base64, sys
                from cryptography.hazmat.primitives import hashes, serialization
                from cryptography.hazmat.primitives.asymmetric import ec
                pub = serialization.load_pem_public_key(open("pub.pem", "rb").read())
                payload = open("payload.bin", "rb").read()
                sig = base64.b64decode(open("sig.b64").read(), validate=True)
                pub.verify(sig, payload, ec.ECDSA(hashes.SHA256()))
                # The payload must split into Apple's seven fields.
                fields = payload.decode("utf-8").split("\\u2063")
                assert len(fields) == 7, fields
                print("OK", fields[5], fields[6])
                """,
                [],
                in: directory
            )
            #expect(python.hasPrefix("OK 6ba7b810-9dad-41d1-80b4-00c04fd430c8 \(request.timestamp)"), "\(name): python said \(python)")
        }
    }

    @Test func signaturesDifferEachTimeButAllVerify() throws {
        // ECDSA is randomised: equal inputs give different signatures, which is why the tests verify rather than compare.
        let key = try SigningFixtures.signingKey()
        let request = OfferSignatureRequestTests.request()
        let a = try StoreKit1OfferSigner.sign(request, with: key)
        let b = try StoreKit1OfferSigner.sign(request, with: key)
        #expect(a.signature != b.signature)
        #expect(StoreKit1OfferSigner.verify(a, for: request, publicKey: key.publicKey))
        #expect(StoreKit1OfferSigner.verify(b, for: request, publicKey: key.publicKey))
    }

    @Test func verifyRefusesTamperingAndOtherKeys() throws {
        let key = try SigningFixtures.signingKey()
        let request = OfferSignatureRequestTests.request()
        let signed = try StoreKit1OfferSigner.sign(request, with: key)
        let payload = try request.payload()

        var otherOffer = request
        otherOffer.offerIdentifier = "winback60"
        #expect(!StoreKit1OfferSigner.verify(payload: try otherOffer.payload(), signature: signed.signature, publicKey: key.publicKey))
        #expect(!StoreKit1OfferSigner.verify(signed, for: otherOffer, publicKey: key.publicKey))

        let otherKey = SigningKey.generate(keyId: SigningFixtures.keyId)
        #expect(!StoreKit1OfferSigner.verify(payload: payload, signature: signed.signature, publicKey: otherKey.publicKey))

        #expect(!StoreKit1OfferSigner.verify(payload: payload, signature: "not base64!", publicKey: key.publicKey))
        #expect(!StoreKit1OfferSigner.verify(payload: payload, signature: Data([0x30, 0x00]).base64EncodedString(), publicKey: key.publicKey))
        // The JWS form (raw r||s, base64url) is not a StoreKit 1 signature.
        let raw = try key.privateKey.signature(for: payload).rawRepresentation
        #expect(!StoreKit1OfferSigner.verify(payload: payload, signature: Base64URL.encode(raw), publicKey: key.publicKey))
    }

    @Test func refusesARequestForAnotherKey() throws {
        let key = try SigningFixtures.signingKey()
        do {
            _ = try StoreKit1OfferSigner.sign(OfferSignatureRequestTests.request(keyId: "OTHERKEY01"), with: key)
            Issue.record("signed a request naming another key")
        } catch {
            #expect(error.code == .keyMismatch)
        }
    }

    @Test func encodesAsJSONWithTheDocumentedFields() throws {
        let signature = StoreKit1OfferSignature(
            keyIdentifier: "RECLAIM001",
            nonce: "n",
            timestamp: 1_700_000_000_000,
            signature: "MEUC",
            applicationUsername: ""
        )
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(signature)) as? [String: Any]
        #expect(Set(json?.keys ?? [:].keys) == ["keyIdentifier", "nonce", "timestamp", "signature", "applicationUsername"])
        #expect(try JSONDecoder().decode(StoreKit1OfferSignature.self, from: JSONEncoder().encode(signature)) == signature)
    }
}
