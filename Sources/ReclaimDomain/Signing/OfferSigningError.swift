/// Why an offer could not be signed: an input that Apple would reject, or that would sign something else
/// than the app will present.
public struct OfferSigningError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, for callers and tests that branch on it.
    public enum Code: String, Sendable, Equatable, CaseIterable {
        /// The app bundle id is empty.
        case emptyBundleId
        /// The key identifier is empty.
        case emptyKeyIdentifier
        /// The product identifier is empty.
        case emptyProductIdentifier
        /// The offer identifier is empty.
        case emptyOfferIdentifier
        /// A StoreKit 1 field contains U+2063, the payload's separator, which would shift every later field.
        case containsSeparator
        /// The nonce is not a UUID.
        case invalidNonce
        /// The StoreKit 1 timestamp is not UNIX milliseconds (too small: seconds; too large: microseconds).
        case timestampNotMilliseconds
        /// The request names another key id than the key that signs it.
        case keyMismatch
        /// A StoreKit 2 signature needs the App Store Connect issuer id, and none is configured.
        case missingIssuerId
        /// A transaction id was given but is empty.
        case emptyTransactionId
        /// The StoreKit 2 `iat` is not UNIX seconds (negative, or large enough to be milliseconds).
        case issuedAtNotSeconds
        /// The cryptographic library failed to sign or encode (not expected with a valid key).
        case signingFailed
    }

    /// What went wrong.
    public let code: Code
    /// The input field at fault, when there is one (e.g. `"productIdentifier"`).
    public let field: String?
    /// A sentence for logs and API errors. Contains no key material.
    public let message: String

    init(_ code: Code, field: String? = nil, _ message: String) {
        self.code = code
        self.field = field
        self.message = message
    }

    public var description: String { message }
}
