import Crypto
import Foundation

/// An App Store Connect subscription (In-App Purchase) key: its key id and its P-256 private key.
///
/// The private key is never part of `description`, `debugDescription` or a `dump`: those show the key id and
/// the SHA-256 fingerprint of the public key, so logs can tell keys apart without leaking them.
public struct SigningKey: Sendable {
    /// The 10-character key id App Store Connect shows next to the key (e.g. `"2X9R4HXF34"`).
    public let keyId: String
    /// The P-256 private key. Treat as secret.
    public let privateKey: P256.Signing.PrivateKey

    /// Where a key comes from, which decides its key id's format.
    public enum Origin: Sendable {
        /// App Store Connect: "Key ID" is exactly 10 characters A–Z and 0–9 (e.g. `2X9R4HXF34`).
        case appStoreConnect
        /// Xcode's StoreKit testing: the "Subscription Offers Key" of a StoreKit configuration file, which Apple
        /// describes as "a key that you use for signing a subscription offer in the test environment. Use this key
        /// instead of your regular key to generate the signature on your server." Apple does not document its id's
        /// format (Xcode shows it beside the key; RevenueCat's guide shows eight hex digits), so any 1 to 32
        /// letters and digits are taken.
        case xcode
    }

    /// Makes a key from an already-parsed private key, checking the key id.
    public init(keyId: String, privateKey: P256.Signing.PrivateKey, origin: Origin = .appStoreConnect) throws(KeyLoadingError) {
        try Self.validate(keyId: keyId, source: "signing key", origin: origin)
        self.keyId = keyId
        self.privateKey = privateKey
    }

    /// The public half, which verifies signatures made with this key.
    public var publicKey: P256.Signing.PublicKey { privateKey.publicKey }

    /// Lowercase hex SHA-256 of the public key's SubjectPublicKeyInfo DER; the same value as
    /// `openssl pkey -in key.p8 -pubout -outform DER | sha256sum`.
    public var publicKeyFingerprint: String {
        SHA256.hash(data: publicKey.derRepresentation).map { String(format: "%02x", $0) }.joined()
    }

    /// The private key as PKCS#8 PEM, the layout of an App Store Connect `.p8` file.
    /// Secret: write it only to files with restricted permissions.
    public var pkcs8PEM: String { privateKey.pemRepresentation }

    /// Loads a key from the contents of a key file.
    ///
    /// Accepts an App Store Connect `.p8` (PKCS#8 PEM), SEC1 PEM (the "EC" PEM label, optionally after an
    /// "EC PARAMETERS" block as `openssl ecparam -genkey` writes it), and binary DER in either layout.
    /// - Parameters:
    ///   - keyId: the key id from App Store Connect; exactly 10 characters A–Z / 0–9.
    ///   - contents: the file's bytes.
    ///   - source: where the contents came from, used in error messages (usually the path).
    ///   - origin: App Store Connect's key, or Xcode's StoreKit testing key (whose id has another format).
    public static func load(keyId: String, contents: Data, source: String, origin: Origin = .appStoreConnect) throws(KeyLoadingError) -> SigningKey {
        try validate(keyId: keyId, source: source, origin: origin)
        let privateKey = try PrivateKeyDecoder.decode(contents, source: source)
        return try SigningKey(keyId: keyId, privateKey: privateKey, origin: origin)
    }

    /// A new random P-256 key, for demos, tests and benchmarks (`reclaim dev` writes it as a `.p8`).
    ///
    /// Does not throw, because callers pass constant key ids; an invalid one is a programming error and stops
    /// the process. Validate ids from configuration with `validate(keyId:source:)` first.
    public static func generate(keyId: String) -> SigningKey {
        do {
            return try SigningKey(keyId: keyId, privateKey: P256.Signing.PrivateKey())
        } catch {
            preconditionFailure(error.message)
        }
    }

    /// Checks the key id's format: for App Store Connect exactly 10 characters, uppercase A–Z and 0–9; for Xcode's
    /// StoreKit testing key 1 to 32 letters and digits.
    public static func validate(keyId: String, source: String, origin: Origin = .appStoreConnect) throws(KeyLoadingError) {
        let upper = UInt8(ascii: "A")...UInt8(ascii: "Z")
        let lower = UInt8(ascii: "a")...UInt8(ascii: "z")
        let digits = UInt8(ascii: "0")...UInt8(ascii: "9")
        let isValid =
            switch origin {
            case .appStoreConnect: keyId.utf8.count == 10 && keyId.utf8.allSatisfy { upper.contains($0) || digits.contains($0) }
            case .xcode:
                (1...32).contains(keyId.utf8.count) && keyId.utf8.allSatisfy { upper.contains($0) || lower.contains($0) || digits.contains($0) }
            }
        guard !isValid else { return }
        // Quote the id only when it is short and printable: a caller that swapped arguments must not get
        // key material echoed back into the logs.
        let shown =
            keyId.count <= 20 && keyId.unicodeScalars.allSatisfy { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F }
            ? "\"\(keyId)\""
            : "(\(keyId.count) characters)"
        throw KeyLoadingError(
            .invalidKeyId,
            source: source,
            origin == .xcode
                ? "key id \(shown) must be 1 to 32 letters and digits, as Xcode shows it beside the Subscription Offers Key"
                : "key id \(shown) must be exactly 10 characters A–Z and 0–9, as App Store Connect shows it (for Xcode's Subscription Offers Key, say xcode: true)"
        )
    }
}

extension SigningKey: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        "SigningKey(keyId: \(keyId), publicKeySHA256: \(publicKeyFingerprint))"
    }

    public var debugDescription: String { description }

    /// Replaces the stored properties in `dump` and debuggers, which would otherwise reach the private key.
    public var customMirror: Mirror {
        Mirror(self, children: ["keyId": keyId, "publicKeySHA256": publicKeyFingerprint], displayStyle: .struct)
    }
}
