import Foundation

/// The claims of a StoreKit 2 introductory-offer-eligibility JWS
/// (`Product.PurchaseOption.introductoryOfferEligibility(compactJWS:)`), audience `"introductory-offer-eligibility"`.
/// Carries `productId` as Apple's App Store Server Library does.
public struct IntroductoryOfferEligibilityClaims: Codable, Sendable, Equatable {
    /// The audience Apple expects for eligibility overrides.
    public static let audience = "introductory-offer-eligibility"

    /// App Store Connect issuer id.
    public let iss: String
    /// The app's bundle id.
    public let bid: String
    /// Always `"introductory-offer-eligibility"`.
    public let aud: String
    /// Issued at, UNIX seconds.
    public let iat: Int64
    /// Lowercase UUID.
    public let nonce: String
    /// The subscription's product id.
    public let productId: String
    /// Whether the customer may (true) or may not (false) redeem the introductory offer.
    public let allowIntroductoryOffer: Bool
    /// The customer's transaction id.
    public let transactionId: String

    /// Checks the inputs and builds the claims.
    public init(
        issuerId: String,
        bundleId: String,
        productId: String,
        allowIntroductoryOffer: Bool,
        transactionId: String,
        nonce: UUID,
        issuedAt: Int64
    ) throws(OfferSigningError) {
        try JWSClaimChecks.require(issuerId: issuerId, bundleId: bundleId, productId: productId, issuedAt: issuedAt, transactionId: transactionId)
        self.iss = issuerId
        self.bid = bundleId
        self.aud = Self.audience
        self.iat = issuedAt
        self.nonce = nonce.lowercaseString
        self.productId = productId
        self.allowIntroductoryOffer = allowIntroductoryOffer
        self.transactionId = transactionId
    }
}
