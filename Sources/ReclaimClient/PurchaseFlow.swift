import Foundation

extension ReclaimClient {
    /// What every purchase with an offer does besides StoreKit's own call; the StoreKit glue
    /// (`purchase(_:with:options:using:)`) wraps it, and it needs no StoreKit, so it is tested on every platform:
    ///
    /// 1. `offer` must be for `productID` (the App Store would refuse it for another product).
    /// 2. An offer signed longer ago than ``PendingOffer/refetchAge`` is fetched again (``refreshed(_:)``): an app left
    ///    running past Apple's 24 hours buys with fresh signatures instead of having the purchase refused. So is an offer
    ///    this client already gave to a purchase (the user cancelled, the purchase failed, they tap again): Apple,
    ///    "each payload, signature, and nonce is only valid for one buy request, even if the buy fails".
    /// 3. purchase_started is reported, `buy` runs with the offer to use, and then the event `event` makes of its
    ///    result (dismissed, purchase_pending, or none), or purchase_failed with the error `buy` threw.
    ///
    /// Events go out in that order, in the background: they never delay the purchase sheet, and a failed report never
    /// fails the purchase.
    @MainActor
    package func purchase<Outcome>(
        _ offer: PendingOffer,
        productID: String,
        buy: @MainActor (PendingOffer) async throws -> Outcome,
        event: (Outcome) -> OfferEvent?
    ) async throws -> Outcome {
        guard offer.productIdentifier == productID else {
            throw ReclaimClientError.offerForAnotherProduct(offerProduct: offer.productIdentifier, product: productID)
        }
        var ready = offer
        if offer.signatureIsStale(at: now()) || spentNonces.contains(offer.storeKit1.nonce) {
            guard let fresh = try await refreshed(offer) else { throw ReclaimClientError.offerNoLongerAvailable(id: offer.id) }
            ready = fresh
        }
        spentNonces.insert(ready.storeKit1.nonce)
        recordInOrder(.purchaseStarted, for: ready, errorText: nil)
        let outcome: Outcome
        do {
            outcome = try await buy(ready)
        } catch {
            if !(error is CancellationError) { recordInOrder(.purchaseFailed, for: ready, errorText: Self.describe(error)) }
            throw error
        }
        if let reported = event(outcome) { recordInOrder(reported, for: ready, errorText: nil) }
        return outcome
    }

    /// Reports in the background, after the events reported before it; a failure is dropped (the funnel only).
    func recordInOrder(_ event: OfferEvent, for offer: PendingOffer, errorText: String?) {
        eventQueue.append { [self] in try? await record(event, for: offer, errorText: errorText) }
    }

    /// Returns once every event reported so far in the background has been sent or has failed.
    package func backgroundEventsSent() async {
        await eventQueue.drained()
    }
}

/// Background reports, one after the other.
final class EventQueue: @unchecked Sendable {
    private let lock = NSLock()
    private var last: Task<Void, Never>?

    func append(_ send: @escaping @Sendable () async -> Void) {
        lock.lock()
        defer { lock.unlock() }
        let previous = last
        last = Task {
            await previous?.value
            await send()
        }
    }

    func drained() async {
        await current()?.value
    }

    private func current() -> Task<Void, Never>? {
        lock.lock()
        defer { lock.unlock() }
        return last
    }
}
