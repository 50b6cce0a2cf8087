#if canImport(StoreKit)
import Foundation
import StoreKit

// The StoreKit glue. Built with the iOS 26 SDK (Xcode 26) or later: there Apple declares the JWS purchase option
// back-deployed to iOS 15, so one code path serves every system StoreKit 2 runs on. Each StoreKit call below quotes
// Apple's declaration; scripts/check-client type-checks this file against those declarations
// (Tests/StoreKitInterface) on Linux, where `#if canImport(StoreKit)` would otherwise hide it.

extension PendingOffer {
    /// StoreKit 2: the purchase options for this offer: the signed promotional-offer JWS, and the appAccountToken
    /// the offer was signed for, if any.
    @available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
    public func purchaseOptions() throws -> Set<Product.PurchaseOption> {
        let mapped = try StoreKitPromotionalOffer(self)
        // Apple: `@backDeployed(before: iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0)
        //  static func promotionalOffer(_ offerID: String, compactJWS: String) -> [Product.PurchaseOption]`
        // It returns an array: every element goes into the purchase.
        var options = Set(Product.PurchaseOption.promotionalOffer(mapped.offerIdentifier, compactJWS: mapped.compactJWS))
        // Apple: `static func appAccountToken(_ token: UUID) -> Product.PurchaseOption`
        if let token = mapped.appAccountToken { options.insert(.appAccountToken(token)) }
        return options
    }

    /// StoreKit 1: the `SKPaymentDiscount`, with the exact Cocoa types; set `payment.applicationUsername` to
    /// ``StoreKitPromotionalOffer/appAccountToken`` (lowercase) as well, or leave it empty when that is `nil`.
    @available(iOS, introduced: 12.2, deprecated: 18.0, message: "StoreKit 1; use purchaseOptions() with StoreKit 2")
    @available(macOS, introduced: 10.14.4, deprecated: 15.0, message: "StoreKit 1; use purchaseOptions() with StoreKit 2")
    @available(tvOS, introduced: 12.2, deprecated: 18.0, message: "StoreKit 1; use purchaseOptions() with StoreKit 2")
    @available(watchOS, introduced: 6.2, deprecated: 11.0, message: "StoreKit 1; use purchaseOptions() with StoreKit 2")
    @available(visionOS, introduced: 1.0, deprecated: 2.0, message: "StoreKit 1; use purchaseOptions() with StoreKit 2")
    public func paymentDiscount() throws -> SKPaymentDiscount {
        let mapped = try StoreKitPromotionalOffer(self)
        // Apple: `init(identifier: String, keyIdentifier: String, nonce: UUID, signature: String, timestamp: NSNumber)`
        return SKPaymentDiscount(
            identifier: mapped.offerIdentifier,
            keyIdentifier: mapped.keyIdentifier,
            nonce: mapped.nonce,
            signature: mapped.signatureBase64,
            timestamp: NSNumber(value: mapped.timestamp)
        )
    }
}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension Product {
    /// Buys this product with `offer` applied (``PendingOffer/purchaseOptions()``) plus any `options` of the app's own.
    public func purchase(_ offer: PendingOffer, options: Set<Product.PurchaseOption> = []) async throws -> Product.PurchaseResult {
        // Apple: `@MainActor func purchase(options: Set<Product.PurchaseOption> = []) async throws -> Product.PurchaseResult`
        try await purchase(options: options.union(try offer.purchaseOptions()))
    }
}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension ReclaimClient {
    /// The offers waiting for the subscriber of `productID`, found by the transaction StoreKit holds for it rather
    /// than by an appAccountToken: for subscribers whose purchases carry none (bought before the app set one, or the
    /// app never does). Empty when this device has no transaction for the product.
    public func pendingOffers(forProduct productID: String) async throws -> [PendingOffer] {
        // Apple: `static func latest(for productID: String) async -> VerificationResult<Transaction>?`; it returns
        // the latest transaction of an expired subscription too, which is whom win-back offers are for.
        guard let latest = await Transaction.latest(for: productID) else { return [] }
        // Apple: `var jwsRepresentation: String { get }` (VerificationResult where SignedType == Transaction): "the
        // same as the JWSTransaction that the App Store Server API returns". Reclaim verifies it, as Apple signed it.
        return try await pendingOffers(signedTransaction: latest.jwsRepresentation)
    }
}
#endif
