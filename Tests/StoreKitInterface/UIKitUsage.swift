// The UIKit purchase docs/ios.md shows, for iOS 17 and later and for visionOS: scripts/check-client type-checks it as
// for iOS and as for visionOS, and holds docs/ios.md's copy to it.

import Foundation
import ReclaimClient
import StoreKit
import UIKit

// docs/ios.md: uikit
/// UIKit on iOS 17+, tvOS 17+ and visionOS: StoreKit shows its sheet in the scene you give.
@available(iOS 17.0, tvOS 17.0, visionOS 1.0, *)
@MainActor
func buy(product: Product, offer: PendingOffer, reclaim: ReclaimClient, scene: UIScene) async throws -> Product.PurchaseResult {
    try await reclaim.purchase(product, with: offer) { try await product.purchase(confirmIn: scene, options: $0) }
}
// docs/ios.md: end

// docs/ios.md: offercode
/// An offer code from Reclaim (ReclaimClient 3.0): Apple's sheet on iOS 16+ and visionOS, the code shown beside it.
@available(iOS 16.0, visionOS 1.0, *)
@MainActor
func redeemCode(reclaim: ReclaimClient, appAccountToken: UUID, scene: UIWindowScene, show: (String) -> Void) async throws {
    let pending = try await reclaim.pendingOffersAndCodes(appAccountToken: appAccountToken)
    guard let code = pending.codes.first else { return }
    show(code.code)
    try? await reclaim.record(.shown, for: code)
    try await reclaim.redeem(code, in: scene)
}
// docs/ios.md: end

// docs/ios.md: cancelflow
/// UIKit on iOS 15+ and visionOS: the subscriber chose `reason` (nil: no answer) on your "Cancel subscription" screen.
/// Returns the flow with Reclaim's answer to show, or, with nothing to show, once Apple's sheet closed. `refundTransactionID`:
/// the subscription's latest `Transaction.id`, for Apple's refund request sheet; `openURL`: your
/// `UIApplication.shared.open(_:)`, for Apple's subscriptions page when a sheet cannot open.
@available(iOS 15.0, visionOS 1.0, *)
@MainActor
func cancelSubscription(
    reclaim: ReclaimClient,
    appAccountToken: UUID,
    reason: String?,
    scene: UIWindowScene,
    refundTransactionID: UInt64?,
    openURL: @escaping @MainActor (URL) async -> Void
) async -> CancelFlow {
    let flow = reclaim.cancelFlow(for: .appAccountToken(appAccountToken), in: scene, refundTransactionID: refundTransactionID, fallback: openURL)
    if await flow.start(reason: reason).content == .nothing {
        await flow.open()  // Apple's sheet: manage subscriptions, or the refund request for "refund"
    }
    return flow  // your buttons: flow.acceptOffer(_:using:) and flow.decline(), and flow.open() at every step
}
// docs/ios.md: end
