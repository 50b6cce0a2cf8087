import Crypto
import Foundation

/// Makes ES256 compact JWS (RFC 7515) with the header Apple expects for StoreKit 2 offer signatures:
/// exactly `{"alg":"ES256","kid":"<key id>","typ":"JWT"}`.
public enum CompactJWSSigner {
    /// The protected header. Its fields are in the order sorted-key encoding gives, which is the order Apple documents.
    public struct Header: Codable, Sendable, Equatable {
        public let alg: String
        public let kid: String
        public let typ: String

        public init(keyId: String) {
            self.alg = "ES256"
            self.kid = keyId
            self.typ = "JWT"
        }
    }

    /// Deterministic JSON: sorted keys and unescaped slashes, so the same claims always give the same bytes.
    static func encode(_ value: some Encodable) throws(OfferSigningError) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return try encoder.encode(value)
        } catch {
            throw OfferSigningError(.signingFailed, "could not encode the JWS as JSON")
        }
    }

    /// Signs `claims` with `key`: `base64url(header) "." base64url(claims) "." base64url(r || s)`.
    /// ES256 signatures in JWS are the raw 64-byte r||s (RFC 7518 §3.4), not DER.
    public static func sign(_ claims: some Encodable, with key: SigningKey) throws(OfferSigningError) -> String {
        let header = try encode(Header(keyId: key.keyId))
        let body = try encode(claims)
        let signingInput = Base64URL.encode(header) + "." + Base64URL.encode(body)
        let signature: P256.Signing.ECDSASignature
        do {
            signature = try key.privateKey.signature(for: Data(signingInput.utf8))
        } catch {
            throw OfferSigningError(.signingFailed, "ECDSA signing failed")
        }
        return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
    }
}
