/// What the app did with an offer, for the funnel (`POST /v1/offers/{id}/events`).
public enum OfferEvent: String, Sendable, CaseIterable {
    case shown
    case dismissed
    case purchaseStarted = "purchase_started"
}
