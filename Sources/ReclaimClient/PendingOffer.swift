import Foundation

/// An offer Reclaim holds for the subscriber, as `GET /v1/offers` returns it, ready for StoreKit.
public struct PendingOffer: Decodable, Sendable, Equatable, Identifiable {
    /// The StoreKit 1 signature (`SKPaymentDiscount`, or StoreKit 2's
    /// `promotionalOffer(offerID:keyID:nonce:signature:timestamp:)`).
    public struct StoreKit1: Decodable, Sendable, Equatable {
        public let keyIdentifier: String
        /// Lowercase UUID, as signed.
        public let nonce: String
        /// UNIX milliseconds, as signed.
        public let timestamp: Int64
        /// Base64 DER ECDSA signature.
        public let signature: String
        /// The lowercase appAccountToken the signature covers (empty when the app sets none): the payment must
        /// carry exactly this.
        public let applicationUsername: String
    }

    public struct StoreKit2: Decodable, Sendable, Equatable {
        /// For `Product.PurchaseOption.promotionalOffer(_:compactJWS:)`.
        public let compactJWS: String
    }

    public let id: String
    public let campaign: String
    public let environment: String
    public let productIdentifier: String
    public let offerIdentifier: String
    public let storeKit1: StoreKit1
    public let storeKit2: StoreKit2
    /// ISO 8601; after it the offer is no longer delivered.
    public let expiresAt: String
}
