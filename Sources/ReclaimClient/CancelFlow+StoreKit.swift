#if canImport(StoreKit)
import Foundation
import StoreKit
#if canImport(UIKit) && !os(tvOS) && !os(watchOS)
import UIKit
#endif

// The cancel flow's StoreKit glue: buying its answers through the client's purchase path, and Apple's sheets where
// Apple declares them. scripts/check-client type-checks this file against the transcribed declarations
// (Tests/StoreKitInterface), as for iOS and as for visionOS.
//
// Apple's sheets, as Apple declares them (each call below quotes it):
// - manage subscriptions, in a window scene: `AppStore.showManageSubscriptions(in:)`, iOS, iPadOS and Mac Catalyst
//   15.0+ and visionOS; for one subscription group, `showManageSubscriptions(in:subscriptionGroupID:)`, 17.0+;
// - refund request, in a window scene: `Transaction.beginRefundRequest(for:in:)`, iOS, iPadOS and Mac Catalyst 15.0+
//   and visionOS;
// - macOS (AppKit) has its own, taking an NSViewController (refund, macOS 12.0+) or an NSWindow (manage, macOS 27.3+),
//   and SwiftUI has `manageSubscriptionsSheet(isPresented:)` and `refundRequestSheet(for:isPresented:onDismiss:)`
//   (Examples/SwiftUI/CancelFlow.swift): the app passes those to `cancelFlow(for:…openSheet:fallback:)` itself;
// - tvOS and watchOS have neither: `openSheet: nil`, and every sheet is the fallback, Apple's subscriptions page.

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension CancelFlow {
    /// The subscriber takes the offer: buys `product` with it through ``ReclaimClient/purchase(_:with:options:using:)``
    /// (the product check, the re-fetch of a stale offer, the offer's own events) with your purchase call
    /// (SwiftUI's `PurchaseAction`, UIKit's `purchase(confirmIn:options:)`, or `purchase(options:)` outside visionOS),
    /// and reports `accepted`, then `purchased`, `purchase_pending` or `purchase_failed` (``acceptOffer(buy:purchase:)``).
    /// `product` is the offer's (`offer.productIdentifier`). Nil when the answer is not an offer.
    public func acceptOffer(
        _ product: Product,
        options: Set<Product.PurchaseOption> = [],
        using buy: @MainActor (Set<Product.PurchaseOption>) async throws -> Product.PurchaseResult
    ) async throws -> Product.PurchaseResult? {
        let client = self.client
        return try await acceptOffer { offer in
            try await client.purchase(product, with: offer, options: options, using: buy)
        } purchase: {
            Self.purchase($0)
        }
    }

    /// The subscriber takes the switch: buys `product`, the answer's product, with your purchase call and `options`,
    /// and reports as ``acceptSwitch(buy:purchase:)``. Nil, and nothing bought, when the answer is not a switch to
    /// `product`.
    public func acceptSwitch(
        to product: Product,
        options: Set<Product.PurchaseOption> = [],
        using buy: @MainActor (Set<Product.PurchaseOption>) async throws -> Product.PurchaseResult
    ) async throws -> Product.PurchaseResult? {
        guard case .switchTo(product.id)? = answer?.content else { return nil }
        return try await acceptSwitch { _ in
            try await buy(options)
        } purchase: {
            Self.purchase($0)
        }
    }

    /// What the funnel makes of StoreKit's result.
    nonisolated static func purchase(_ result: Product.PurchaseResult) -> Purchase? {
        // Apple: `enum PurchaseResult`: `case success(VerificationResult<Transaction>)`, `case userCancelled`,
        // `case pending` (Ask to Buy: the purchase awaits approval and may still complete).
        switch result {
        case .success: .purchased
        case .pending: .pending
        case .userCancelled: .cancelled
        @unknown default: nil
        }
    }
}

#if canImport(UIKit) && !os(tvOS) && !os(watchOS)
@available(iOS 15.0, macCatalyst 15.0, visionOS 1.0, *)
extension CancelFlow {
    /// Opens Apple's `sheet` in `scene` and returns once the subscriber closed it: the manage-subscriptions sheet (for
    /// `subscriptionGroupID` alone from iOS 17, as Apple declares it), or the refund request sheet for
    /// `refundTransactionID` (the subscription's latest transaction, `Transaction.id`). Throws
    /// ``SheetUnavailable`` for a refund request without a transaction, and whatever StoreKit throws: the flow then
    /// falls back (``CancelFlow/open(_:)``).
    public static func openAppleSheet(
        _ sheet: Sheet,
        in scene: UIWindowScene,
        subscriptionGroupID: String? = nil,
        refundTransactionID: UInt64?
    ) async throws {
        switch sheet {
        case .manageSubscriptions:
            if let subscriptionGroupID {
                if #available(iOS 17.0, macCatalyst 17.0, visionOS 1.0, *) {
                    // Apple (iOS 17.0+, iPadOS 17.0+, Mac Catalyst 17.0+, visionOS 1.0+): `@MainActor static func
                    // showManageSubscriptions(in scene: UIWindowScene, subscriptionGroupID: String) async throws`
                    try await AppStore.showManageSubscriptions(in: scene, subscriptionGroupID: subscriptionGroupID)
                    return
                }
            }
            // Apple (iOS 15.0+, iPadOS 15.0+, Mac Catalyst 15.0+, visionOS 1.0+): `@MainActor static func
            // showManageSubscriptions(in scene: UIWindowScene) async throws`, "Presents the App Store sheet for managing
            // subscriptions".
            try await AppStore.showManageSubscriptions(in: scene)
        case .refundRequest:
            guard let refundTransactionID else { throw SheetUnavailable() }
            // Apple (iOS 15.0+, iPadOS 15.0+, Mac Catalyst 15.0+, visionOS 1.0+): `@MainActor static func
            // beginRefundRequest(for transactionID: UInt64, in scene: UIWindowScene) async throws ->
            // Transaction.RefundRequestStatus`. Its status is the request's, not the refund's: a subscriber who closed
            // it (`.userCancelled`) is not sent anywhere else.
            _ = try await Transaction.beginRefundRequest(for: refundTransactionID, in: scene)
        }
    }
}

@available(iOS 15.0, macCatalyst 15.0, visionOS 1.0, *)
extension ReclaimClient {
    /// A cancel flow (``cancelFlow(for:canShow:deadline:openSheet:fallback:)``) whose sheets are Apple's, in `scene`
    /// (``CancelFlow/openAppleSheet(_:in:subscriptionGroupID:refundTransactionID:)``): UIKit on iOS, iPadOS,
    /// Mac Catalyst and visionOS. `fallback` opens Apple's subscriptions page when a sheet fails
    /// (`UIApplication.shared.open(url)`).
    @MainActor
    public func cancelFlow(
        for subscriber: CancelFlow.Subscriber?,
        canShow: Set<CancelFlow.AnswerKind> = Set(CancelFlow.AnswerKind.allCases),
        in scene: UIWindowScene,
        subscriptionGroupID: String? = nil,
        refundTransactionID: UInt64? = nil,
        deadline: TimeInterval = CancelFlow.defaultDeadline,
        fallback: @escaping @MainActor (URL) async -> Void
    ) -> CancelFlow {
        cancelFlow(
            for: subscriber,
            canShow: canShow,
            deadline: deadline,
            openSheet: { sheet in
                try await CancelFlow.openAppleSheet(
                    sheet,
                    in: scene,
                    subscriptionGroupID: subscriptionGroupID,
                    refundTransactionID: refundTransactionID
                )
            },
            fallback: fallback
        )
    }
}
#endif
#endif
