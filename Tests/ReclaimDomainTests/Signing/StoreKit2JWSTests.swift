import Foundation
import ReclaimDomain
import ReclaimTestSupport
import Testing

/// StoreKit 2 compact JWS, decoded and verified by PyJWT, with the header and claims Apple documents.
@Suite(.poolWatchdog) struct StoreKit2JWSTests {
    static let issuerId = "57246542-96fe-1a63-e053-0824d011072a"
    static let nonce = UUID(uuidString: "6BA7B810-9DAD-41D1-80B4-00C04FD430C8")!
    static let issuedAt: Int64 = 1_700_000_000

    static func signer() throws -> OfferSigner {
        OfferSigner(key: try SigningFixtures.signingKey(), bundleId: "com.example.reclaim", issuerId: issuerId)
    }

    /// Verifies `token` with PyJWT for `audience` and returns PyJWT's view of header and claims as JSON.
    static func pyjwtDecode(_ token: String, audience: String) async throws -> (header: [String: Any], claims: [String: Any]) {
        let output = try await ExternalTools.withTemporaryDirectory { directory in
            try ExternalTools.write(Data(SigningFixtures.p256PKCS8.utf8), to: "key.p8", in: directory)
            try await ExternalTools.openssl(["pkey", "-in", "key.p8", "-pubout", "-out", "pub.pem"], in: directory)
            try ExternalTools.write(Data(token.utf8), to: "token.jws", in: directory)
            return try await ExternalTools.python(
                """
                import json, sys, jwt
                pub = open("pub.pem").read()
                token = open("token.jws").read()
                claims = jwt.decode(token, pub, algorithms=["ES256"], audience=sys.argv[1])
                print(json.dumps({"header": jwt.get_unverified_header(token), "claims": claims}))
                """,
                [audience],
                in: directory
            )
        }
        let object = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        return (try #require(object["header"] as? [String: Any]), try #require(object["claims"] as? [String: Any]))
    }

    /// The decoded text of segment `index` of a compact JWS.
    static func segment(_ token: String, _ index: Int) throws -> String {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        try #require(parts.count == 3)
        return String(decoding: try #require(Base64URL.decode(parts[index])), as: UTF8.self)
    }

    @Test func promotionalOfferVerifiesWithPyJWT() async throws {
        let token = try Self.signer().storeKit2(
            product: "com.example.pro.monthly",
            offer: "winback50",
            nonce: Self.nonce,
            issuedAt: Self.issuedAt,
            transactionId: "2000000123456789"
        )
        // Exact bytes: Apple documents this header, and sorted keys make the claims deterministic.
        #expect(try Self.segment(token, 0) == #"{"alg":"ES256","kid":"RECLAIM001","typ":"JWT"}"#)
        #expect(
            try Self.segment(token, 1)
                == #"{"aud":"promotional-offer","bid":"com.example.reclaim","iat":1700000000,"iss":"57246542-96fe-1a63-e053-0824d011072a","nonce":"6ba7b810-9dad-41d1-80b4-00c04fd430c8","offerIdentifier":"winback50","productId":"com.example.pro.monthly","transactionId":"2000000123456789"}"#
        )
        // ES256 in JWS is raw r||s, 64 bytes, not DER.
        let signature = try #require(Base64URL.decode(token.split(separator: ".")[2]))
        #expect(signature.count == 64)

        let (header, claims) = try await Self.pyjwtDecode(token, audience: "promotional-offer")
        #expect(Set(header.keys) == ["alg", "kid", "typ"])
        #expect(header["alg"] as? String == "ES256")
        #expect(header["kid"] as? String == SigningFixtures.keyId)
        #expect(header["typ"] as? String == "JWT")
        #expect(Set(claims.keys) == ["iss", "bid", "aud", "iat", "nonce", "productId", "offerIdentifier", "transactionId"])
        #expect(claims["iss"] as? String == Self.issuerId)
        #expect(claims["bid"] as? String == "com.example.reclaim")
        #expect(claims["aud"] as? String == "promotional-offer")
        #expect((claims["iat"] as? NSNumber)?.int64Value == Self.issuedAt)
        #expect(claims["nonce"] as? String == "6ba7b810-9dad-41d1-80b4-00c04fd430c8")
        #expect(claims["productId"] as? String == "com.example.pro.monthly")
        #expect(claims["offerIdentifier"] as? String == "winback50")
        #expect(claims["transactionId"] as? String == "2000000123456789")
    }

    @Test func promotionalOfferWithoutTransactionIdOmitsTheClaim() async throws {
        let token = try Self.signer().storeKit2(
            product: "com.example.pro.über",
            offer: "réduction/50",
            nonce: Self.nonce,
            issuedAt: Self.issuedAt,
            transactionId: nil
        )
        let (_, claims) = try await Self.pyjwtDecode(token, audience: "promotional-offer")
        #expect(Set(claims.keys) == ["iss", "bid", "aud", "iat", "nonce", "productId", "offerIdentifier"])
        #expect(claims["productId"] as? String == "com.example.pro.über")
        #expect(claims["offerIdentifier"] as? String == "réduction/50")
        #expect(!(try Self.segment(token, 1)).contains("exp"))
    }

    @Test func wrongAudienceIsRefusedByPyJWT() async throws {
        let token = try Self.signer().storeKit2(product: "p", offer: "o", nonce: Self.nonce, issuedAt: Self.issuedAt, transactionId: nil)
        // Only PyJWT's audience error counts: a missing python3 also throws, and must not pass this test.
        await #expect {
            try await Self.pyjwtDecode(token, audience: "some-other-audience")
        } throws: { error in
            (error as? ExternalTools.Failure)?.description.contains("InvalidAudienceError") == true
        }
    }

    @Test(
        arguments: [
            ("no issuer id", nil, "p", "o", issuedAt, nil, OfferSigningError.Code.missingIssuerId),
            ("empty issuer id", "", "p", "o", issuedAt, nil, .missingIssuerId),
            ("empty product", issuerId, "", "o", issuedAt, nil, .emptyProductIdentifier),
            ("empty offer", issuerId, "p", "", issuedAt, nil, .emptyOfferIdentifier),
            ("iat in milliseconds", issuerId, "p", "o", issuedAt * 1000, nil, .issuedAtNotSeconds),
            ("negative iat", issuerId, "p", "o", -1, nil, .issuedAtNotSeconds),
            ("empty transaction id", issuerId, "p", "o", issuedAt, "", .emptyTransactionId),
        ] as [(String, String?, String, String, Int64, String?, OfferSigningError.Code)]
    )
    func refusesBadInput(
        name: String,
        issuer: String?,
        product: String,
        offer: String,
        iat: Int64,
        transactionId: String?,
        code: OfferSigningError.Code
    ) throws {
        let signer = OfferSigner(key: try SigningFixtures.signingKey(), bundleId: "com.example.reclaim", issuerId: issuer)
        do {
            _ = try signer.storeKit2(product: product, offer: offer, nonce: Self.nonce, issuedAt: iat, transactionId: transactionId)
            Issue.record("\(name): accepted")
        } catch {
            #expect(error.code == code, "\(name): \(error)")
        }
    }

    @Test func emptyBundleIdIsRefused() throws {
        let signer = OfferSigner(key: try SigningFixtures.signingKey(), bundleId: "", issuerId: Self.issuerId)
        #expect(throws: OfferSigningError.self) {
            try signer.storeKit2(product: "p", offer: "o", nonce: Self.nonce, issuedAt: Self.issuedAt, transactionId: "1")
        }
    }
}
