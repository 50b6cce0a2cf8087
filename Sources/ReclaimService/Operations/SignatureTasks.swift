import Foundation
import ReclaimDomain
import X509

/// `reclaim sign` and `reclaim verify`: an offer signed, a signed payload verified (the executable only parses arguments).
public enum SignatureTasks {
    /// Signs one offer and returns the JSON to print. The StoreKit 1 signature is verified against
    /// the key's public key before it is returned, as Apple's guide advises.
    public static func sign(
        bundleId: String,
        keyId: String,
        keyFile: String,
        product: String,
        offer: String,
        applicationUsername: String,
        nonce: String?,
        timestampMillis: Int64?,
        issuerId: String?,
        jws: Bool,
        now: Date = Date()
    ) throws -> String {
        guard let contents = FileManager.default.contents(atPath: keyFile) else {
            throw ConfigError("cannot read key file \(keyFile)")
        }
        let key = try SigningKey.load(keyId: keyId, contents: contents, source: keyFile)
        let signer = OfferSigner(key: key, bundleId: bundleId, issuerId: issuerId)
        let nonceValue: UUID
        if let nonce {
            guard let parsed = UUID(uuidString: nonce) else { throw ConfigError("--nonce must be a UUID, got '\(nonce)'") }
            nonceValue = parsed
        } else {
            nonceValue = UUID()
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        if jws {
            guard issuerId != nil else { throw ConfigError("--jws needs --issuer-id (your App Store Connect issuer id)") }
            let issuedAt = (timestampMillis ?? OfferSignatureRequest.milliseconds(since1970: now)) / 1000
            let compact = try signer.storeKit2(product: product, offer: offer, nonce: nonceValue, issuedAt: issuedAt, transactionId: nil)
            return String(decoding: try encoder.encode(["compactJWS": compact]), as: UTF8.self)
        }
        let signature = try signer.storeKit1(
            product: product,
            offer: offer,
            applicationUsername: applicationUsername,
            nonce: nonceValue,
            timestamp: timestampMillis ?? OfferSignatureRequest.milliseconds(since1970: now)
        )
        guard signer.verify(signature, product: product, offer: offer) else {
            throw ConfigError("the signature just made does not verify with the key's public key: refusing to print it")
        }
        struct Output: Encodable {
            let keyIdentifier: String
            let nonce: String
            let timestamp: Int64
            let signature: String
        }
        let output = Output(
            keyIdentifier: signature.keyIdentifier,
            nonce: signature.nonce,
            timestamp: signature.timestamp,
            signature: signature.signature
        )
        return String(decoding: try encoder.encode(output), as: UTF8.self)
    }

    /// Verifies a signed payload (or a `{"signedPayload": …}` body) and returns its decoded JSON.
    public static func verify(input: Data, rootFiles: [String], bundleId: String?, environment: String?) async throws -> String {
        var roots = [AppleJWSVerifier.appleRootCAG3]
        for file in rootFiles {
            guard let pem = FileManager.default.contents(atPath: file) else { throw ConfigError("cannot read root certificate file \(file)") }
            roots += try AppleJWSVerifier.certificates(fromPEM: String(decoding: pem, as: UTF8.self))
        }
        let verifier = AppleJWSVerifier(trustedRoots: roots)
        let json = try await verifier.inspect(input, expectedBundleId: bundleId, expectedEnvironment: environment)
        return String(decoding: json, as: UTF8.self)
    }
}
