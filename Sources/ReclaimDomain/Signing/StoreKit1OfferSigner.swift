import Crypto
import Foundation

/// Signs and verifies StoreKit 1 promotional offer signatures: ECDSA P-256 over SHA-256 of the request's payload,
/// DER-encoded, in standard base64.
public enum StoreKit1OfferSigner {
    /// Signs a request. The request's key identifier must be the key's id: Apple looks the key up by that id.
    public static func sign(_ request: OfferSignatureRequest, with key: SigningKey) throws(OfferSigningError) -> StoreKit1OfferSignature {
        guard request.keyIdentifier == key.keyId else {
            throw OfferSigningError(
                .keyMismatch,
                field: "keyIdentifier",
                "the request names key \(request.keyIdentifier) but is signed with key \(key.keyId)"
            )
        }
        let nonce = request.renderedNonce
        let applicationUsername = request.renderedApplicationUsername
        let payload = Data(try request.payloadString(applicationUsername: applicationUsername, nonce: nonce).utf8)
        let signature: P256.Signing.ECDSASignature
        do {
            signature = try key.privateKey.signature(for: payload)
        } catch {
            throw OfferSigningError(.signingFailed, "ECDSA signing failed")
        }
        return StoreKit1OfferSignature(
            keyIdentifier: key.keyId,
            nonce: nonce,
            timestamp: request.timestamp,
            signature: signature.derRepresentation.base64EncodedString(),
            applicationUsername: applicationUsername
        )
    }

    /// Whether `signature` (standard base64 of a DER ECDSA signature) is valid for `payload` under `publicKey`.
    /// Apple advises verifying a signature before handing it to the app; this is that check. `false` for
    /// anything malformed.
    public static func verify(payload: Data, signature: String, publicKey: P256.Signing.PublicKey) -> Bool {
        guard let der = Data(base64Encoded: signature),
            let parsed = try? P256.Signing.ECDSASignature(derRepresentation: der)
        else { return false }
        return publicKey.isValidSignature(parsed, for: payload)
    }

    /// Whether `signature` is valid for `request` under `publicKey`, and carries the request's values.
    public static func verify(_ signature: StoreKit1OfferSignature, for request: OfferSignatureRequest, publicKey: P256.Signing.PublicKey) -> Bool {
        guard signature.keyIdentifier == request.keyIdentifier,
            signature.nonce == request.renderedNonce,
            signature.timestamp == request.timestamp,
            signature.applicationUsername == request.renderedApplicationUsername,
            let payload = try? request.payload()
        else { return false }
        return verify(payload: payload, signature: signature.signature, publicKey: publicKey)
    }
}
