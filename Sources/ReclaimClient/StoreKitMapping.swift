import Foundation

/// The values StoreKit needs from an offer, in the exact types it takes, shared by the StoreKit glue and
/// tested on every platform (Apple warns that wrong types fail silently).
public struct StoreKitPromotionalOffer: Sendable, Equatable {
    public let offerIdentifier: String
    public let keyIdentifier: String
    /// `SKPaymentDiscount.nonce` and `promotionalOffer(…nonce:…)` take a UUID.
    public let nonce: UUID
    /// `SKPaymentDiscount.signature` is the base64 string; StoreKit 2's `signature:` takes its bytes.
    public let signatureBase64: String
    public let signature: Data
    /// UNIX milliseconds: `SKPaymentDiscount.timestamp` is an NSNumber of them, StoreKit 2 an Int.
    public let timestamp: Int
    /// The appAccountToken the offer was signed for, as a `UUID` for StoreKit 2's `.appAccountToken(_:)` (which
    /// ``PendingOffer/purchaseOptions()`` adds). For StoreKit 1's `applicationUsername` use
    /// `offer.storeKit1.applicationUsername`, the exact lowercase string: this UUID's `uuidString` is uppercase.
    public let appAccountToken: UUID?
    public let compactJWS: String

    public init(_ offer: PendingOffer) throws {
        guard let nonce = UUID(uuidString: offer.storeKit1.nonce) else { throw ReclaimClientError.invalidResponse("nonce is not a UUID") }
        guard let signature = Data(base64Encoded: offer.storeKit1.signature) else {
            throw ReclaimClientError.invalidResponse("signature is not base64")
        }
        offerIdentifier = offer.offerIdentifier
        keyIdentifier = offer.storeKit1.keyIdentifier
        self.nonce = nonce
        signatureBase64 = offer.storeKit1.signature
        self.signature = signature
        timestamp = Int(offer.storeKit1.timestamp)
        appAccountToken = offer.storeKit1.applicationUsername.isEmpty ? nil : UUID(uuidString: offer.storeKit1.applicationUsername)
        compactJWS = offer.storeKit2.compactJWS
    }
}
