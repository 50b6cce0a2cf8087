// The app code of ReclaimClient's DocC article (Sources/ReclaimClient/ReclaimClient.docc), kept in step with it:
// scripts/check-client type-checks it against ReclaimClient and the StoreKit stand-in. It fails when the glue is
// hidden (`#if canImport(StoreKit)` false) or does not fit Apple's declarations.

import Foundation
import ReclaimClient
import StoreKit

enum MyBackend {
    static func reclaimUserToken() async throws -> String { "token" }
}

let reclaim = ReclaimClient(
    baseURL: URL(string: "https://reclaim.example.com")!,
    appKey: "rk_app_…",
    userToken: { try await MyBackend.reclaimUserToken() }
)

func offerOnLaunch(product: Product, userID: UUID?) async {
    let offers: [PendingOffer]
    if let userID {
        offers = (try? await reclaim.pendingOffers(appAccountToken: userID)) ?? []
    } else {
        offers = (try? await reclaim.pendingOffers(forProduct: product.id)) ?? []
    }
    guard let offer = offers.first(where: { $0.productIdentifier == product.id }) else { return }
    try? await reclaim.record(.shown, for: offer)
    try? await reclaim.record(.purchaseStarted, for: offer)
    do {
        switch try await product.purchase(offer) {
        case .success(let verification):
            if case .verified(let transaction) = verification { await transaction.finish() }
        case .userCancelled, .pending:
            try? await reclaim.record(.dismissed, for: offer)
        @unknown default:
            break
        }
    } catch {
        try? await reclaim.record(.dismissed, for: offer)
    }
}

func storeKit1(_ offer: PendingOffer) throws -> SKPaymentDiscount {
    try offer.paymentDiscount()
}
