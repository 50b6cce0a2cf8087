import Foundation
import ReclaimTestSupport

/// Verifies offer signatures with Python's `cryptography` (installed by scripts/install-deps), independently
/// of swift-crypto: the StoreKit 1 signature over Apple's exact U+2063-joined payload, and the StoreKit 2 JWS
/// (ES256 over header.payload, r‖s converted to DER) with its header and claims.
enum PythonCrossCheck {
    struct Offer: Encodable {
        let payload: String
        let signature: String
        let jws: String
        let expectedClaims: [String: String]
    }

    struct Failure: Error, CustomStringConvertible { let description: String }

    static let script = #"""
        import base64, json, sys
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
        data = json.load(sys.stdin)
        key = serialization.load_pem_public_key(data["publicKey"].encode())
        def b64url(s): return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
        for offer in data["offers"]:
            key.verify(base64.b64decode(offer["signature"]), offer["payload"].encode("utf-8"), ec.ECDSA(hashes.SHA256()))
            header, claims, sig = offer["jws"].split(".")
            raw = b64url(sig)
            assert len(raw) == 64, "JWS signature is not 64 bytes r||s"
            der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
            key.verify(der, (header + "." + claims).encode(), ec.ECDSA(hashes.SHA256()))
            h = json.loads(b64url(header)); c = json.loads(b64url(claims))
            assert h == {"alg": "ES256", "kid": data["keyId"], "typ": "JWT"}, h
            assert c["aud"] == "promotional-offer" and "exp" not in c, c
            for k, v in offer["expectedClaims"].items():
                assert str(c.get(k)) == v, (k, c.get(k), v)
        print("verified", len(data["offers"]))
        """#

    /// Throws unless every offer verifies; returns how many did.
    static func verify(_ offers: [Offer], publicKeyPEM: String, keyId: String) async throws -> Int {
        struct Input: Encodable {
            let publicKey: String
            let keyId: String
            let offers: [Offer]
        }
        let run = try await Subprocess.run(
            "/usr/bin/env",
            ["python3", "-c", script],
            input: try JSONEncoder().encode(Input(publicKey: publicKeyPEM, keyId: keyId, offers: offers))
        )
        let printed = run.output
        guard run.status == 0, printed.hasPrefix("verified ") else { throw Failure(description: "python3 refused: \(printed)\(run.errors)") }
        return Int(printed.dropFirst("verified ".count).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }

    /// The claims of a compact JWS as PyJWT decodes it (ES256, audience "promotional-offer", signature checked).
    static func claimsWithPyJWT(_ jws: String, publicKeyPEM: String) async throws -> [String: Any] {
        let run = try await Subprocess.run(
            "/usr/bin/env",
            [
                "python3", "-c",
                "import jwt, json, sys; print(json.dumps(jwt.decode(sys.argv[1], sys.argv[2], algorithms=['ES256'], audience='promotional-offer')))",
                jws, publicKeyPEM,
            ]
        )
        guard run.status == 0, let claims = try? JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any] else {
            throw Failure(description: "PyJWT refused: \(run.output)\(run.errors)")
        }
        return claims
    }
}
