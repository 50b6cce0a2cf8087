// The app code docs/ios.md (and README.md's app snippet) shows for an app without SwiftUI's PurchaseAction (UIKit before
// iOS 17, AppKit, watchOS, tvOS): scripts/check-client type-checks it against ReclaimClient and the StoreKit stand-in,
// and holds the documents' copies to it. It fails when the glue is hidden (`#if canImport(StoreKit)` false) or does not fit Apple's declarations.
// Not for visionOS, which has no `purchase(options:)`: there the SwiftUI example (Examples/SwiftUI) is what compiles.

import Foundation
import ReclaimClient
import StoreKit

enum MyBackend {
    static func reclaimUserToken() async throws -> String { "token" }
}

// docs/ios.md: client
let reclaim = ReclaimClient(
    baseURL: URL(string: "https://reclaim.example.com")!,
    appKey: "rk_app_…",
    // Only if the app is configured with userTokenSecretFile: called when the client has no token yet and
    // again, once per request, when Reclaim refused the last one (tokens expire).
    userToken: { try await MyBackend.reclaimUserToken() }
)
// docs/ios.md: end

// docs/ios.md: launch
/// The offer to show on the paywall for `product`, if Reclaim holds one. `userID`: the appAccountToken your purchases
/// carry for the signed-in user, or nil; the client also tries the subscription group's transactions.
func offerForPaywall(product: Product, userID: UUID?) async -> (offer: PendingOffer, price: String)? {
    let offers = (try? await reclaim.pendingOffers(for: product, appAccountToken: userID)) ?? []
    guard let offer = offers.first(where: { $0.productIdentifier == product.id }),
        let listed = await reclaim.storeKitOffer(for: offer, of: product)
    else { return nil }
    try? await reclaim.record(.shown, for: offer)
    return (offer, listed.displayPrice)
}

/// When the user accepts: buys `product` with `offer`.
@MainActor
func buy(product: Product, offer: PendingOffer) async {
    do {
        switch try await reclaim.purchase(product, with: offer) {
        case .success(.verified(let transaction)):
            await transaction.finish()  // unlock; Reclaim learns of the redemption from Apple
        case .success(.unverified), .pending, .userCancelled:
            break  // reported to Reclaim already (pending, dismissed); show what fits
        @unknown default:
            break
        }
    } catch {
        // Reported as purchase_failed with StoreKit's error; ReclaimClientError.offerNoLongerAvailable when the
        // offer had to be fetched again and has ended.
    }
}
// docs/ios.md: end

func showOffer(_ price: String) {}

// README: app-snippet
/// On the paywall for `product`. `userID`: the appAccountToken your purchases carry, or nil.
@MainActor
func paywall(product: Product, userID: UUID?) async throws {
    let offers = (try? await reclaim.pendingOffers(for: product, appAccountToken: userID)) ?? []
    guard let offer = offers.first(where: { $0.productIdentifier == product.id }),
        let price = await reclaim.storeKitOffer(for: offer, of: product)?.displayPrice
    else { return }  // no offer: your regular paywall
    showOffer(price)  // your paywall, at the App Store's price of the offer
    try? await reclaim.record(.shown, for: offer)  // a report never stops a purchase
    // When the user accepts (with SwiftUI, and on visionOS, give it your PurchaseAction: docs/ios.md):
    if case .success(.verified(let transaction)) = try await reclaim.purchase(product, with: offer) {
        await transaction.finish()
    }
}
// README: end

func storeKit1(_ offer: PendingOffer) throws -> SKPaymentDiscount {
    try offer.paymentDiscount()
}
