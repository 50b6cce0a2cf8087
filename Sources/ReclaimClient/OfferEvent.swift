/// What the app did with an offer, for the funnel (`POST /v1/offers/{id}/events`).
public enum OfferEvent: String, Sendable, CaseIterable {
    case shown
    /// The user turned the offer down (StoreKit's `.userCancelled`, or the app's own "not now").
    case dismissed
    case purchaseStarted = "purchase_started"
    /// StoreKit answered `.pending`: Ask to Buy, or a purchase that awaits approval. It may still complete.
    case purchasePending = "purchase_pending"
    /// StoreKit refused the purchase or threw; sent with its error (``ReclaimClient/record(_:for:error:)``).
    case purchaseFailed = "purchase_failed"
}
