import Foundation

/// The inputs of a StoreKit 1 promotional offer signature (`SKPaymentDiscount`, also accepted by StoreKit 2's
/// `promotionalOffer(offerID:signature:)`), and the exact payload Apple verifies.
///
/// The nonce and timestamp are inputs, never made here, so that signing is deterministic apart from ECDSA's own
/// randomness and tests can pin the payload bytes.
public struct OfferSignatureRequest: Sendable, Equatable {
    /// U+2063 INVISIBLE SEPARATOR, which Apple puts between the payload's fields.
    public static let separator = "\u{2063}"

    /// The app's bundle id, e.g. `"com.example.app"`.
    public var appBundleId: String
    /// The subscription key's id; must be the id of the key that signs.
    public var keyIdentifier: String
    /// The subscription's product id.
    public var productIdentifier: String
    /// The promotional offer's id as set up in App Store Connect.
    public var offerIdentifier: String
    /// The app's `applicationUsername` / `appAccountToken`; may be empty. See `renderedApplicationUsername`.
    public var applicationUsername: String
    /// One-time value the app passes back with the payment.
    public var nonce: UUID
    /// UNIX time in milliseconds; Apple accepts the signature for 24 hours after it.
    public var timestamp: Int64

    /// The core initializer: every input explicit.
    public init(
        appBundleId: String,
        keyIdentifier: String,
        productIdentifier: String,
        offerIdentifier: String,
        applicationUsername: String,
        nonce: UUID,
        timestamp: Int64
    ) {
        self.appBundleId = appBundleId
        self.keyIdentifier = keyIdentifier
        self.productIdentifier = productIdentifier
        self.offerIdentifier = offerIdentifier
        self.applicationUsername = applicationUsername
        self.nonce = nonce
        self.timestamp = timestamp
    }

    /// For nonces that arrive as text (an API request): refuses anything that is not a UUID, in either case.
    public init(
        appBundleId: String,
        keyIdentifier: String,
        productIdentifier: String,
        offerIdentifier: String,
        applicationUsername: String,
        nonce: String,
        timestamp: Int64
    ) throws(OfferSigningError) {
        guard let uuid = UUID(uuidString: nonce) else {
            throw OfferSigningError(.invalidNonce, field: "nonce", "nonce is not a UUID (expected the form 8-4-4-4-12 hex digits)")
        }
        self.init(
            appBundleId: appBundleId,
            keyIdentifier: keyIdentifier,
            productIdentifier: productIdentifier,
            offerIdentifier: offerIdentifier,
            applicationUsername: applicationUsername,
            nonce: uuid,
            timestamp: timestamp
        )
    }

    /// Convenience taking the signing time as a `Date` (supplied by the caller's clock), truncated to milliseconds.
    public init(
        appBundleId: String,
        keyIdentifier: String,
        productIdentifier: String,
        offerIdentifier: String,
        applicationUsername: String,
        nonce: UUID,
        now: Date
    ) {
        self.init(
            appBundleId: appBundleId,
            keyIdentifier: keyIdentifier,
            productIdentifier: productIdentifier,
            offerIdentifier: offerIdentifier,
            applicationUsername: applicationUsername,
            nonce: nonce,
            timestamp: Self.milliseconds(since1970: now)
        )
    }

    /// UNIX milliseconds of a date, rounded down.
    public static func milliseconds(since1970 date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// The nonce as it appears in the payload and in the app: lowercase.
    public var renderedNonce: String { nonce.lowercaseString }

    /// `applicationUsername` as it appears in the payload. An appAccountToken is a UUID and the payment carries it
    /// lowercase, so a UUID in any case is rendered lowercase; any other value is used verbatim.
    public var renderedApplicationUsername: String {
        // Only a 36-character string can be a UUID; skipping the parse otherwise keeps the common empty case cheap.
        guard applicationUsername.utf8.count == 36, let token = UUID(uuidString: applicationUsername) else { return applicationUsername }
        return token.lowercaseString
    }

    /// Timestamps below this are seconds, not milliseconds (10^12 ms is September 2001).
    static let minimumTimestamp: Int64 = 1_000_000_000_000
    /// Timestamps above this are microseconds (10^14 ms is the year 5138).
    static let maximumTimestamp: Int64 = 100_000_000_000_000

    /// Checks every field; the payload of a request that passes is what Apple expects.
    public func validate() throws(OfferSigningError) {
        let required: [(String, String, OfferSigningError.Code)] = [
            ("appBundleId", appBundleId, .emptyBundleId),
            ("keyIdentifier", keyIdentifier, .emptyKeyIdentifier),
            ("productIdentifier", productIdentifier, .emptyProductIdentifier),
            ("offerIdentifier", offerIdentifier, .emptyOfferIdentifier),
        ]
        for (name, value, code) in required where value.isEmpty {
            throw OfferSigningError(code, field: name, "\(name) must not be empty")
        }
        for (name, value) in [
            ("appBundleId", appBundleId), ("keyIdentifier", keyIdentifier), ("productIdentifier", productIdentifier),
            ("offerIdentifier", offerIdentifier), ("applicationUsername", applicationUsername),
        ]
        where value.unicodeScalars.contains("\u{2063}") {
            throw OfferSigningError(.containsSeparator, field: name, "\(name) contains U+2063, the separator of the signed payload")
        }
        guard timestamp >= Self.minimumTimestamp else {
            throw OfferSigningError(
                .timestampNotMilliseconds,
                field: "timestamp",
                "timestamp \(timestamp) is too small for UNIX milliseconds (seconds given?)"
            )
        }
        guard timestamp <= Self.maximumTimestamp else {
            throw OfferSigningError(
                .timestampNotMilliseconds,
                field: "timestamp",
                "timestamp \(timestamp) is too large for UNIX milliseconds (microseconds given?)"
            )
        }
    }

    /// The signed string: bundle id, key id, product, offer, application username, nonce and timestamp, joined by U+2063.
    public func payloadString() throws(OfferSigningError) -> String {
        try payloadString(applicationUsername: renderedApplicationUsername, nonce: renderedNonce)
    }

    /// The payload from already-rendered values, so the signer renders each once.
    func payloadString(applicationUsername: String, nonce: String) throws(OfferSigningError) -> String {
        try validate()
        return [appBundleId, keyIdentifier, productIdentifier, offerIdentifier, applicationUsername, nonce, String(timestamp)]
            .joined(separator: Self.separator)
    }

    /// The signed bytes: `payloadString()` in UTF-8.
    public func payload() throws(OfferSigningError) -> Data {
        Data(try payloadString().utf8)
    }
}
