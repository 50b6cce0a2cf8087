// A SwiftUI paywall row that shows a lapsed subscriber Reclaim's offer at the App Store's price and buys it, on every
// platform SwiftUI's PurchaseAction runs on, visionOS included. docs/ios.md shows this file; scripts/check-client
// type-checks it against ReclaimClient and Apple's declarations (Tests/StoreKitInterface), as for iOS and as for
// visionOS. Copy it into your app and adapt the texts.

import Foundation
import Observation
import ReclaimClient
import StoreKit
import SwiftUI

/// Finds the subscriber's offer for `product`, shows its App Store price, and buys with it; without an offer, the
/// product at its own price.
@available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
@MainActor
@Observable
final class WinBackOfferModel {
    let product: Product
    private let reclaim: ReclaimClient
    /// Your signed-in user's appAccountToken, if your purchases carry one; nil otherwise.
    private let appAccountToken: UUID?
    private var offer: PendingOffer?
    /// The price the button shows: the offer's, as the App Store gives it, or the product's own.
    private(set) var price: String
    /// The offer's terms under the button (price, period, payment mode, then the regular price); empty without one.
    private(set) var terms = ""
    private(set) var status = ""

    init(product: Product, reclaim: ReclaimClient, appAccountToken: UUID?) {
        self.product = product
        self.reclaim = reclaim
        self.appAccountToken = appAccountToken
        price = product.displayPrice
    }

    var buttonTitle: String { offer == nil ? "Subscribe for \(price)" : "Come back for \(price)" }

    /// Call when the paywall appears. The client tries the token and then the subscription group's transactions,
    /// expired ones included; an offer StoreKit does not list for the product is reported and not shown.
    func load() async {
        let offers = (try? await reclaim.pendingOffers(for: product, appAccountToken: appAccountToken)) ?? []
        guard let found = offers.first(where: { $0.productIdentifier == product.id }),
            let listed = await reclaim.storeKitOffer(for: found, of: product)
        else { return }
        offer = found
        price = listed.displayPrice
        terms = offerTerms(listed, for: product)  // Examples/OfferTerms.swift
        try? await reclaim.record(.shown, for: found)
    }

    /// Call from the button, with the view's `PurchaseAction`.
    func buy(using purchase: PurchaseAction) async {
        do {
            let result: Product.PurchaseResult
            if let offer {
                // Checks the product, fetches a stale offer again, reports started/dismissed/pending/failed.
                result = try await reclaim.purchase(product, with: offer) { try await purchase(product, options: $0) }
            } else {
                result = try await purchase(product)
            }
            switch result {
            case .success(.verified(let transaction)):
                // Unlock the subscription here. Reclaim learns of the redemption from Apple's notification.
                await transaction.finish()
                offer = nil
                price = product.displayPrice
                terms = ""
                status = "Welcome back."
            case .success(.unverified):
                status = "The App Store could not verify this purchase."
            case .pending:
                status = "Waiting for approval."
            case .userCancelled:
                break
            @unknown default:
                break
            }
        } catch ReclaimClientError.offerNoLongerAvailable {
            offer = nil
            price = product.displayPrice
            terms = ""
            status = "This offer has ended."
        } catch {
            status = "The purchase did not go through: \(error.localizedDescription)"
        }
    }
}

/// The row: the product, the button with the offer's price, and what became of the purchase.
@available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
struct WinBackOfferView: View {
    let model: WinBackOfferModel
    @Environment(\.purchase) private var purchase

    var body: some View {
        VStack {
            Text(model.product.displayName)
            Button(model.buttonTitle) {
                Task { await model.buy(using: purchase) }
            }
            Text(model.terms)
            Text(model.status)
        }
        .task { await model.load() }
    }
}
