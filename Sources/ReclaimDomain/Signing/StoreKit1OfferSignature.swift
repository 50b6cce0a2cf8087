/// A signed StoreKit 1 promotional offer: the values the app passes to `SKPaymentDiscount` (or to StoreKit 2's
/// `promotionalOffer(offerID:keyID:nonce:signature:timestamp:)`), exactly as they were signed.
public struct StoreKit1OfferSignature: Codable, Sendable, Equatable {
    /// The subscription key's id.
    public var keyIdentifier: String
    /// The nonce, lowercase UUID.
    public var nonce: String
    /// UNIX milliseconds.
    public var timestamp: Int64
    /// ECDSA P-256 / SHA-256 signature, DER, standard base64.
    public var signature: String
    /// The application username as signed (a UUID lowercase); the app must send this exact value.
    public var applicationUsername: String

    public init(keyIdentifier: String, nonce: String, timestamp: Int64, signature: String, applicationUsername: String) {
        self.keyIdentifier = keyIdentifier
        self.nonce = nonce
        self.timestamp = timestamp
        self.signature = signature
        self.applicationUsername = applicationUsername
    }
}
