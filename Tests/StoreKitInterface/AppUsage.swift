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
/// An offer for the paywall, with the terms to show: its price, period and payment mode, then the regular price.
struct PaywallOffer: Sendable {
    let offer: PendingOffer
    let terms: String
}

/// The offer to show on the paywall for `product`, if Reclaim holds one. `userID`: the appAccountToken your purchases
/// carry for the signed-in user, or nil; the client also tries the subscription group's transactions. Once the offer
/// is on screen: `try? await reclaim.record(.shown, for: offer)`.
func offerForPaywall(product: Product, userID: UUID?) async -> PaywallOffer? {
    let offers = (try? await reclaim.pendingOffers(for: product, appAccountToken: userID)) ?? []
    guard let offer = offers.first(where: { $0.productIdentifier == product.id }),
        let listed = await reclaim.storeKitOffer(for: offer, of: product)
    else { return nil }
    return PaywallOffer(offer: offer, terms: offerTerms(listed, for: product))  // Examples/OfferTerms.swift
}

/// When the user accepts: buys `product` with `offer`.
@MainActor
func buy(product: Product, offer: PendingOffer) async {
    do {
        switch try await reclaim.purchase(product, with: offer) {
        case .success(.verified(let transaction)):
            await transaction.finish()  // unlock; Reclaim learns of the redemption from Apple
        case .pending:
            break  // Ask to Buy: reported to Reclaim; the purchase completes, if approved, in Transaction.updates
        case .userCancelled:
            break  // reported to Reclaim as dismissed; a second tap fetches the offer again (a nonce buys once)
        case .success(.unverified):
            break  // StoreKit could not verify the transaction: do not unlock; nothing is reported

        @unknown default:
            break
        }
    } catch {
        // Reported as purchase_failed with StoreKit's error; ReclaimClientError.offerNoLongerAvailable when the
        // offer had to be fetched again and has ended.
    }
}
// docs/ios.md: end

// docs/ios.md: updates
/// Start at launch, before the first purchase, and keep for the app's lifetime: a purchase that completes outside
/// `purchase` arrives here, not as its result: an Ask to Buy purchase a parent approved (`.pending` at first), a
/// renewal, an offer code, a purchase on another device, a transaction the app did not finish last time.
func listenForTransactions() -> Task<Void, Never> {
    Task.detached {
        for await result in Transaction.updates {
            guard case .verified(let transaction) = result else { continue }
            // Unlock what transaction.productID grants, then:
            await transaction.finish()
        }
    }
}
// docs/ios.md: end

// docs/ios.md: deadline
/// At launch: the paywall's offer, or nil once `seconds` have passed. Without a bound, a server that never answers
/// holds one call about 12.6 s (3 attempts of 4 s and the 0.2 s and 0.4 s pauses between them), and a lookup makes up
/// to one call for the token and one per subscription status in the group. Cancelled, the lookup stops at once.
func offerForPaywall(product: Product, userID: UUID?, waitingAtMost seconds: UInt64) async -> PaywallOffer? {
    await withTaskGroup(of: PaywallOffer?.self) { group in
        group.addTask { await offerForPaywall(product: product, userID: userID) }
        group.addTask {
            try? await Task.sleep(nanoseconds: seconds * 1_000_000_000)
            return nil
        }
        defer { group.cancelAll() }  // cancels the lookup's request, or the timer
        return await group.next() ?? nil
    }
}
// docs/ios.md: end

// docs/ios.md: storekit1
/// StoreKit 1: the payment for `product` with the offer. `applicationUsername` is the string the signature covers,
/// exactly: lowercase (a UUID's `uuidString` is uppercase, and would not match), or left unset when it is empty.
func payment(for product: SKProduct, offer: PendingOffer) throws -> SKMutablePayment {
    let payment = SKMutablePayment(product: product)
    payment.paymentDiscount = try offer.paymentDiscount()
    if !offer.storeKit1.applicationUsername.isEmpty {
        payment.applicationUsername = offer.storeKit1.applicationUsername
    }
    return payment
}
// docs/ios.md: end

func showOffer(_ terms: String) {}

// README: app-snippet
/// On the paywall for `product`. `userID`: the appAccountToken your purchases carry, or nil.
@MainActor
func paywall(product: Product, userID: UUID?) async throws {
    let offers = (try? await reclaim.pendingOffers(for: product, appAccountToken: userID)) ?? []
    guard let offer = offers.first(where: { $0.productIdentifier == product.id }),
        let listed = await reclaim.storeKitOffer(for: offer, of: product)
    else { return }  // no offer: your regular paywall
    showOffer(offerTerms(listed, for: product))  // the App Store's price, period and payment mode of the offer
    try? await reclaim.record(.shown, for: offer)  // a report never stops a purchase
    // When the user accepts (with SwiftUI, and on visionOS, give it your PurchaseAction: docs/ios.md):
    if case .success(.verified(let transaction)) = try await reclaim.purchase(product, with: offer) {
        await transaction.finish()
    }
}
// README: end
