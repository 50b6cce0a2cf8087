#if canImport(StoreKit)
import Foundation
import StoreKit

// The StoreKit glue. Built with the iOS 26 SDK (Xcode 26) or later: there Apple declares the JWS purchase option
// back-deployed to iOS 15, so one code path serves every system StoreKit 2 runs on. Each StoreKit call below quotes
// Apple's declaration and availability; scripts/check-client type-checks this file against those declarations
// (Tests/StoreKitInterface) on Linux, where `#if canImport(StoreKit)` would otherwise hide it, once as for iOS and
// once as for visionOS (RECLAIM_CHECK_VISIONOS, below).
//
// visionOS: Apple declares `purchase(options:)` for iOS 15, macOS 12, tvOS 15 and watchOS 8 only; on visionOS it is
// unavailable ("Use @Environment(\.purchase) to get a PurchaseAction value to call. If your app uses UIKit, use
// purchase(confirmIn:options:)"). Every path below that calls it is compiled out for visionOS; the ones that take the
// app's own purchase call (`purchase(_:with:options:using:)`) serve every platform. A Linux type-check cannot compile an
// `#if os(visionOS)` branch, so each such condition also reads RECLAIM_CHECK_VISIONOS, which scripts/check-client
// sets against a StoreKit stand-in where `purchase(options:)` is unavailable: what visionOS compiles is type-checked.

extension PendingOffer {
    /// StoreKit 2: the purchase options for this offer: the signed promotional-offer JWS, and the appAccountToken
    /// the offer was signed for, if any.
    @available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
    public func purchaseOptions() throws -> Set<Product.PurchaseOption> {
        let mapped = try StoreKitPromotionalOffer(self)
        // Apple (iOS 15.0+, macOS 12.0+, tvOS 15.0+, watchOS 8.0+, visionOS 1.0+):
        // `@backDeployed(before: iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0)
        //  static func promotionalOffer(_ offerID: String, compactJWS: String) -> [Product.PurchaseOption]`
        // It returns an array: every element goes into the purchase.
        var options = Set(Product.PurchaseOption.promotionalOffer(mapped.offerIdentifier, compactJWS: mapped.compactJWS))
        // Apple: `static func appAccountToken(_ token: UUID) -> Product.PurchaseOption` (iOS 15.0+, visionOS 1.0+)
        if let token = mapped.appAccountToken { options.insert(.appAccountToken(token)) }
        return options
    }

    /// StoreKit 1: the `SKPaymentDiscount`, with the exact Cocoa types. Set `payment.applicationUsername` to
    /// `storeKit1.applicationUsername` exactly, the lowercase string the signature covers (a `UUID`'s `uuidString` is
    /// uppercase and would not match), or leave it unset when that is empty.
    @available(iOS, introduced: 12.2, deprecated: 18.0, message: "StoreKit 1; use purchaseOptions() with StoreKit 2")
    @available(macOS, introduced: 10.14.4, deprecated: 15.0, message: "StoreKit 1; use purchaseOptions() with StoreKit 2")
    @available(tvOS, introduced: 12.2, deprecated: 18.0, message: "StoreKit 1; use purchaseOptions() with StoreKit 2")
    @available(watchOS, introduced: 6.2, deprecated: 11.0, message: "StoreKit 1; use purchaseOptions() with StoreKit 2")
    @available(visionOS, introduced: 1.0, deprecated: 2.0, message: "StoreKit 1; use purchaseOptions() with StoreKit 2")
    public func paymentDiscount() throws -> SKPaymentDiscount {
        let mapped = try StoreKitPromotionalOffer(self)
        // Apple (iOS 12.2–18.0, visionOS 1.0–2.0): `init(identifier: String, keyIdentifier: String, nonce: UUID,
        //  signature: String, timestamp: NSNumber)`
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
    #if os(visionOS) || RECLAIM_CHECK_VISIONOS
    @available(*, unavailable, message: "visionOS has no purchase(options:): use ReclaimClient.purchase(_:with:options:using:)")
    public func purchase(_ offer: PendingOffer, options: Set<Product.PurchaseOption> = []) async throws -> Product.PurchaseResult {
        fatalError("unavailable")
    }
    #else
    /// Buys this product with `offer` applied (``PendingOffer/purchaseOptions()``) plus any `options` of the app's own;
    /// reports nothing (``ReclaimClient/purchase(_:with:options:)`` does). Not on visionOS.
    public func purchase(_ offer: PendingOffer, options: Set<Product.PurchaseOption> = []) async throws -> Product.PurchaseResult {
        // Apple (iOS 15.0+, macOS 12.0+, tvOS 15.0+, watchOS 8.0+; not visionOS):
        // `@MainActor func purchase(options: Set<Product.PurchaseOption> = []) async throws -> Product.PurchaseResult`
        try await purchase(options: options.union(try offer.purchaseOptions()))
    }
    #endif
}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension ReclaimClient {
    /// The offers waiting for the subscriber of `product`'s subscription group, found by every lookup that applies
    /// (``pendingOffers(appAccountToken:signedTransactions:)``): by `appAccountToken` if the app gives its signed-in
    /// user's, then by the latest transaction of each subscription in the group, expired ones included (a lapsed
    /// yearly subscriber is found from the monthly paywall). Each offer names its product: buy it with that product.
    public func pendingOffers(for product: Product, appAccountToken: UUID? = nil) async throws -> [PendingOffer] {
        try await pendingOffers(appAccountToken: appAccountToken) {
            // Apple (iOS 15.0+, visionOS 1.0+): `let subscription: Product.SubscriptionInfo?`, "A nil value indicates
            // that this product isn't an auto-renewable subscription"; `let subscriptionGroupID: String`.
            guard let group = product.subscription?.subscriptionGroupID else { return [] }
            // Apple (iOS 15.0+, macOS 12.0+, tvOS 15.0+, watchOS 8.0+, visionOS 1.0+):
            // `static func status(for groupID: String) async throws -> [Product.SubscriptionInfo.Status]`, "empty if
            // the customer has never subscribed to a product in this subscription group"; more than one with Family
            // Sharing. `let transaction: VerificationResult<Transaction>`: "The latest transaction for the subscription
            // group", which an expired subscription keeps.
            // `var jwsRepresentation: String { get }` (VerificationResult where SignedType == Transaction): "the same as
            // the JWSTransaction that the App Store Server API returns"; Reclaim verifies Apple's signature itself.
            return try await Product.SubscriptionInfo.status(for: group).map(\.transaction.jwsRepresentation)
        }
    }

    /// How the App Store describes `offer` (its price, `displayPrice`), from `product`'s promotional offers; nil when
    /// StoreKit lists none with the offer's identifier for the product: App Store Connect and Reclaim's configuration
    /// disagree, and a purchase would fail. That is reported to the server as purchase_failed
    /// (``ReclaimClientError/offerNotInStoreKit(offerIdentifier:productID:)``), so it shows there and not only here.
    public func storeKitOffer(for offer: PendingOffer, of product: Product) async -> Product.SubscriptionOffer? {
        // Apple (iOS 15.0+, visionOS 1.0+): `let promotionalOffers: [Product.SubscriptionOffer]`, "empty if you
        // haven't set up promotional offers in App Store Connect"; `let id: String?`, "the alphanumeric offer
        // identifier you provide when you configure an offer in App Store Connect".
        if offer.productIdentifier == product.id,
            let listed = product.subscription?.promotionalOffers.first(where: { $0.id == offer.offerIdentifier })
        {
            return listed
        }
        let mismatch = ReclaimClientError.offerNotInStoreKit(offerIdentifier: offer.offerIdentifier, productID: product.id)
        try? await record(.purchaseFailed, for: offer, error: mismatch)
        return nil
    }

    /// Buys `product` with `offer` through the purchase call the app gives, on every platform: SwiftUI's
    /// `PurchaseAction` (`{ try await purchase(product, options: $0) }`, iOS 17+, visionOS), UIKit's
    /// `{ try await product.purchase(confirmIn: scene, options: $0) }`, or `{ try await product.purchase(options: $0) }`.
    /// `buy` gets the offer's options (``PendingOffer/purchaseOptions()``) with the app's `options`.
    ///
    /// Around the call (``purchase(_:productID:buy:event:)``): the offer must be for `product`; an offer signed
    /// longer ago than ``PendingOffer/refetchAge`` is fetched again first; purchase_started is reported, then
    /// `.userCancelled` as dismissed, `.pending` (Ask to Buy) as purchase_pending, and an error StoreKit threw as
    /// purchase_failed with that error, which is rethrown. `.success` reports nothing: Apple's notification tells
    /// Reclaim of the redemption. Reports go out in the background and never fail the purchase.
    @MainActor
    public func purchase(
        _ product: Product,
        with offer: PendingOffer,
        options: Set<Product.PurchaseOption> = [],
        using buy: @MainActor (Set<Product.PurchaseOption>) async throws -> Product.PurchaseResult
    ) async throws -> Product.PurchaseResult {
        try await purchase(offer, productID: product.id) { ready in
            try await buy(options.union(try ready.purchaseOptions()))
        } event: { result in
            // Apple: `enum PurchaseResult`: `case success(VerificationResult<Transaction>)`, `case userCancelled`,
            // `case pending` (Ask to Buy: the purchase awaits approval and may still complete).
            switch result {
            case .success: nil
            case .userCancelled: .dismissed
            case .pending: .purchasePending
            @unknown default: nil
            }
        }
    }

    #if os(visionOS) || RECLAIM_CHECK_VISIONOS
    @available(*, unavailable, message: "visionOS has no purchase(options:): use purchase(_:with:options:using:)")
    @MainActor
    public func purchase(
        _ product: Product,
        with offer: PendingOffer,
        options: Set<Product.PurchaseOption> = []
    ) async throws -> Product.PurchaseResult {
        fatalError("unavailable")
    }
    #else
    /// ``purchase(_:with:options:using:)`` with StoreKit's `purchase(options:)`: for UIKit before iOS 17, AppKit,
    /// watchOS and tvOS. Not on visionOS, where Apple has no such call.
    @MainActor
    public func purchase(
        _ product: Product,
        with offer: PendingOffer,
        options: Set<Product.PurchaseOption> = []
    ) async throws -> Product.PurchaseResult {
        // Apple (iOS 15.0+, macOS 12.0+, tvOS 15.0+, watchOS 8.0+; not visionOS):
        // `@MainActor func purchase(options: Set<Product.PurchaseOption> = []) async throws -> Product.PurchaseResult`
        try await purchase(product, with: offer, options: options) { try await product.purchase(options: $0) }
    }
    #endif
}
#endif
