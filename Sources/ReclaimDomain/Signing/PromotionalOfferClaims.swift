import Foundation

/// The claims of a StoreKit 2 promotional offer JWS (`Product.PurchaseOption.promotionalOffer(_:compactJWS:)`),
/// audience `"promotional-offer"`. There is no `exp`: Apple bounds the validity from `iat`.
public struct PromotionalOfferClaims: Codable, Sendable, Equatable {
    /// The audience Apple expects for promotional offers.
    public static let audience = "promotional-offer"

    /// App Store Connect issuer id.
    public let iss: String
    /// The app's bundle id.
    public let bid: String
    /// Always `"promotional-offer"`.
    public let aud: String
    /// Issued at, UNIX seconds.
    public let iat: Int64
    /// Lowercase UUID.
    public let nonce: String
    /// The subscription's product id.
    public let productId: String
    /// The promotional offer's id.
    public let offerIdentifier: String
    /// Optional: binds the offer to the customer's transaction; omitted from the JSON when `nil`.
    public let transactionId: String?

    /// Checks the inputs and builds the claims.
    public init(
        issuerId: String,
        bundleId: String,
        productId: String,
        offerIdentifier: String,
        nonce: UUID,
        issuedAt: Int64,
        transactionId: String?
    ) throws(OfferSigningError) {
        try JWSClaimChecks.require(issuerId: issuerId, bundleId: bundleId, productId: productId, issuedAt: issuedAt, transactionId: transactionId)
        guard !offerIdentifier.isEmpty else {
            throw OfferSigningError(.emptyOfferIdentifier, field: "offerIdentifier", "offerIdentifier must not be empty")
        }
        self.iss = issuerId
        self.bid = bundleId
        self.aud = Self.audience
        self.iat = issuedAt
        self.nonce = nonce.lowercaseString
        self.productId = productId
        self.offerIdentifier = offerIdentifier
        self.transactionId = transactionId
    }
}
