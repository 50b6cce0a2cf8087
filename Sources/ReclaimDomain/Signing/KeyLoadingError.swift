/// Why a subscription key could not be loaded.
///
/// The message names where the key came from (`source`, usually a file path) and what was found there,
/// and never contains key material: it is written to logs and shown to operators.
public struct KeyLoadingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, for callers and tests that branch on it.
    public enum Code: String, Sendable, Equatable, CaseIterable {
        /// The key id is not 10 characters of A–Z and 0–9, as App Store Connect shows it.
        case invalidKeyId
        /// The contents are empty or only whitespace.
        case empty
        /// Neither a PEM block nor DER that looks like a private key (text, a certificate, an unrelated ASN.1 structure).
        case notAKey
        /// A public key only; signing needs the private key.
        case publicKeyOnly
        /// A password-protected key (PKCS#8 "ENCRYPTED PRIVATE KEY" or legacy encrypted PEM).
        case encryptedKey
        /// An RSA key (PKCS#1 or PKCS#8).
        case rsaKey
        /// An EC key on a curve other than P-256 (secp256k1, P-384, ...).
        case wrongCurve
        /// A private key of another algorithm (Ed25519, X25519, DSA, ...).
        case unsupportedAlgorithm
        /// Looks like a P-256 key but is damaged: bad DER, bad scalar, or a public key that does not match.
        case malformed
    }

    /// What went wrong.
    public let code: Code
    /// Where the key came from, as the caller named it (a path, "environment RECLAIM_KEY", ...).
    public let source: String
    /// A sentence for operators, naming `source`.
    public let message: String

    /// Creates an error; `detail` says what was found and is appended to the source name.
    init(_ code: Code, source: String, _ detail: String) {
        self.code = code
        self.source = source
        self.message = "\(source): \(detail)"
    }

    public var description: String { message }
}
