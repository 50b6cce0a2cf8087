import Foundation

/// Why a call failed, by cause.
public enum ReclaimClientError: Error, Sendable, Equatable {
    /// The server could not be reached (offline, DNS, TLS, connection reset).
    case network(String)
    /// No answer within the client's timeout.
    case timedOut
    /// The app key, the user token or the transaction was refused: 401, with the problem's `type`
    /// (`urn:reclaim:problem:invalid-user-token` for the user token).
    case unauthorized(type: String, detail: String)
    /// Too many requests: 429; retry after the given seconds.
    case rateLimited(retryAfter: Int?)
    /// Any other refusal or failure, with the problem's stable `type` (`urn:reclaim:problem:…`).
    case server(status: Int, type: String, detail: String)
    /// An answer that is not what the API documents.
    case invalidResponse(String)
    /// A purchase of `product` was asked for with an offer signed for `offerProduct`: the App Store would refuse it.
    case offerForAnotherProduct(offerProduct: String, product: String)
    /// The offer's signature was too old to buy with, and Reclaim no longer delivers the offer (it expired, was
    /// redeemed or withdrawn): fetch the offers again.
    case offerNoLongerAvailable(id: String)
    /// StoreKit lists no promotional offer with this identifier for the product: App Store Connect and Reclaim's
    /// configuration disagree (a typo, or an offer not yet approved). Recorded as `purchase_failed` for the server.
    case offerNotInStoreKit(offerIdentifier: String, productID: String)
}
