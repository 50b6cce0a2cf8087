/// Why a signed payload from Apple was refused.
///
/// `code` is stable and meant for machines (the HTTP layer maps ``Code/malformed`` to 400 and the
/// signature and chain codes to 401); `reason` is for people and may change.
public struct JWSVerificationError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The class of failure.
    public enum Code: String, Sendable, CaseIterable {
        /// Not a compact JWS, a segment is not base64url, the header or payload is not the expected JSON (including
        /// a registered claim Apple's libraries refuse: ``RegisteredClaims``).
        case malformed
        /// `alg` is anything but "ES256" (including "none" and HMAC): refused before any key is looked at.
        case unsupportedAlgorithm
        /// An `x5c` entry is not base64 DER of a certificate, or the leaf's key is not P-256.
        case invalidCertificate
        /// `x5c` is missing or does not hold exactly three certificates, or no chain to a trusted root validates.
        case invalidChain
        /// The leaf or the intermediate lacks Apple's marker extension.
        case missingAppleExtension
        /// A certificate of the chain is not valid at the validation time (the payload's `signedDate`).
        case chainExpired
        /// The ES256 signature does not verify with the leaf's key.
        case invalidSignature
    }

    public let code: Code
    public let reason: String

    /// - Parameter reason: cut to ``LogText/reasonLimit`` characters with control characters escaped: a reason
    ///   may quote the payload, and it is logged, recorded and answered.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = LogText.bounded(reason, limit: LogText.reasonLimit)
    }

    public var description: String { "\(code.rawValue): \(reason)" }

    /// The same failure, its reason prefixed with where it happened (e.g. the nested `signedTransactionInfo`).
    func prefixed(_ context: String) -> JWSVerificationError {
        JWSVerificationError(code, "\(context): \(reason)")
    }
}
