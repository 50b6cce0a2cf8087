#if canImport(StoreKit)
import Foundation
import StoreKit

extension PendingOffer {
    /// StoreKit 2: the purchase options for this offer: the signed JWS where the system has it (iOS 18.4,
    /// macOS 15.4 and later), else the StoreKit 1 signature; and the appAccountToken the signature covers.
    @available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
    public func purchaseOptions() throws -> Set<Product.PurchaseOption> {
        let mapped = try StoreKitPromotionalOffer(self)
        var options: Set<Product.PurchaseOption> = []
        if #available(iOS 18.4, macOS 15.4, tvOS 18.4, watchOS 11.4, visionOS 2.4, *) {
            options.insert(.promotionalOffer(mapped.offerIdentifier, compactJWS: mapped.compactJWS))
        } else {
            options.insert(
                .promotionalOffer(
                    offerID: mapped.offerIdentifier,
                    keyID: mapped.keyIdentifier,
                    nonce: mapped.nonce,
                    signature: mapped.signature,
                    timestamp: mapped.timestamp
                )
            )
        }
        if let token = mapped.appAccountToken { options.insert(.appAccountToken(token)) }
        return options
    }

    /// StoreKit 1: the `SKPaymentDiscount`, with the exact Cocoa types; set `payment.applicationUsername` to
    /// ``StoreKitPromotionalOffer/appAccountToken`` (lowercase) as well.
    public func paymentDiscount() throws -> SKPaymentDiscount {
        let mapped = try StoreKitPromotionalOffer(self)
        return SKPaymentDiscount(
            identifier: mapped.offerIdentifier,
            keyIdentifier: mapped.keyIdentifier,
            nonce: mapped.nonce,
            signature: mapped.signatureBase64,
            timestamp: NSNumber(value: mapped.timestamp)
        )
    }
}
#endif
