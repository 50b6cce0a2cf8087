import Foundation
import ReclaimDomain

/// A live offer as delivery and the refresher read it from `reclaim.offers`.
public struct StoredOffer: Sendable, Equatable {
    public var id: UUID
    public var campaignId: String
    public var bundleId: String
    public var environment: String
    public var originalTransactionId: String
    public var appAccountToken: UUID?
    public var productId: String
    public var offerIdentifier: String
    public var keyId: String
    public var nonce: UUID
    public var signedAt: Date
    public var applicationUsername: String
    public var storeKit1Signature: String
    public var storeKit2JWS: String
    /// Whether these signatures were handed out already (each is handed out once).
    public var signatureDelivered: Bool
    public var deliverableUntil: Date

    /// The stored StoreKit 1 values as the app receives them.
    public var storeKit1: StoreKit1OfferSignature {
        StoreKit1OfferSignature(
            keyIdentifier: keyId,
            nonce: nonce.uuidString.lowercased(),
            // signedAt was a whole millisecond when signed; PostgreSQL's microseconds and Double's binary
            // fractions bring it back a hair off, so round to the nearest millisecond, never down.
            timestamp: Int64((signedAt.timeIntervalSince1970 * 1000).rounded()),
            signature: storeKit1Signature,
            applicationUsername: applicationUsername
        )
    }

    /// Replaces the stored signatures with `signed`, made by the key `keyId`.
    public mutating func replaceSignatures(with signed: SignedOffer) {
        keyId = signed.storeKit1.keyIdentifier
        nonce = signed.nonce
        signedAt = signed.signedAt
        applicationUsername = signed.storeKit1.applicationUsername
        storeKit1Signature = signed.storeKit1.signature
        storeKit2JWS = signed.storeKit2JWS
        signatureDelivered = false
    }
}
