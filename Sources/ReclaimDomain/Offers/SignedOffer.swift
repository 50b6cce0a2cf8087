import Foundation

/// An offer signed both ways Apple accepts, with the nonce and time they share.
public struct SignedOffer: Sendable, Equatable {
    public var nonce: UUID
    /// Millisecond precision: the StoreKit 1 timestamp.
    public var signedAt: Date
    public var storeKit1: StoreKit1OfferSignature
    /// Compact JWS for `Product.PurchaseOption.promotionalOffer(_:compactJWS:)`.
    public var storeKit2JWS: String
}

extension OfferSigner {
    /// Signs `offer` for `product` for one subscriber: a StoreKit 1 signature whose applicationUsername is the
    /// lowercase appAccountToken (empty when unknown, as the app then sets none) and a StoreKit 2 JWS bound to
    /// the subscriber's `transactionId` when known. Both use `nonce` and `now`.
    public func signOffer(
        product: String,
        offer: String,
        appAccountToken: UUID?,
        transactionId: String?,
        nonce: UUID,
        now: Date
    ) throws(OfferSigningError) -> SignedOffer {
        let timestamp = OfferSignatureRequest.milliseconds(since1970: now)
        let storeKit1 = try storeKit1(
            product: product,
            offer: offer,
            applicationUsername: appAccountToken?.lowercaseString ?? "",
            nonce: nonce,
            timestamp: timestamp
        )
        let jws = try storeKit2(product: product, offer: offer, nonce: nonce, issuedAt: timestamp / 1000, transactionId: transactionId)
        return SignedOffer(nonce: nonce, signedAt: Date(unixMilliseconds: timestamp), storeKit1: storeKit1, storeKit2JWS: jws)
    }
}
