#if canImport(StoreKit) && canImport(UIKit) && !os(tvOS) && !os(watchOS)
import Foundation
import StoreKit
import UIKit

// Apple's redemption sheet for offer codes, where Apple declares one that takes a window scene: iOS, iPadOS, Mac
// Catalyst 16.0 and later, and visionOS. Elsewhere the app opens the code's `redemptionURL` (tvOS and watchOS have no
// sheet; on macOS Apple's is `presentOfferCodeRedeemSheet(from: NSViewController)`, or SwiftUI's
// `offerCodeRedemption(isPresented:onCompletion:)`, which the app calls itself). scripts/check-client type-checks this
// file against the transcribed declarations (Tests/StoreKitInterface).

extension ReclaimClient {
    /// Opens Apple's sheet to redeem `code` in `scene`, after recording ``OfferEvent/purchaseStarted`` for it; a sheet
    /// that fails records ``OfferEvent/purchaseFailed`` with its error and rethrows. Apple's sheet asks the subscriber to
    /// type the code: show ``PendingOfferCode/code`` beside it. The redemption reaches Reclaim from Apple (a transaction
    /// with `offerType` 3), not from the sheet.
    @available(iOS 16.0, macCatalyst 16.0, visionOS 1.0, *)
    @MainActor
    public func redeem(_ code: PendingOfferCode, in scene: UIWindowScene) async throws {
        try? await record(.purchaseStarted, for: code)
        do {
            // Apple (iOS 16.0–27.0, iPadOS 16.0–27.0, Mac Catalyst 16.0–27.0, visionOS 1.0–27.0):
            // `@MainActor static func presentOfferCodeRedeemSheet(in scene: UIWindowScene) async throws`
            try await AppStore.presentOfferCodeRedeemSheet(in: scene)
        } catch {
            try? await record(.purchaseFailed, for: code, error: error)
            throw error
        }
    }
}
#endif
