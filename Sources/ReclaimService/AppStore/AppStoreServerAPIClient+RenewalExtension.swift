import Foundation
import NIOHTTP1

/// Make-goods and account repair through Apple: renewal-date extensions, one subscription or all of a product's, and
/// Set App Account Token. Paced, retried and refused as every call (``AppStoreServerAPIClient``); Apple's refusals
/// arrive as ``AppStoreAPIError`` named by Apple's error code (e.g. `4030005 SubscriptionMaxExtensionError`).
extension AppStoreServerAPIClient {
    /// Extend a Subscription Renewal Date: `PUT /inApps/v1/subscriptions/extend/{originalTransactionId}`. Apple:
    /// "Extends the renewal date of a customer's active subscription using the original transaction identifier."
    ///
    /// Apple refuses (403) a subscription "in a free offer period", an inactive one "in a billing retry state", one
    /// "in a grace period state with an expiration date in the past", one that has "already received two renewal date
    /// extensions within the past 365 days" (`SubscriptionMaxExtensionError`), an expired one
    /// (`SubscriptionExtensionIneligibleError`), and one obtained through Family Sharing
    /// (`FamilySharedSubscriptionExtensionIneligibleError`). The same `requestIdentifier` again is the same request:
    /// sent again after a lost answer, it extends once.
    public func extendRenewalDate(
        originalTransactionId: String,
        _ request: AppStoreAPI.ExtendRenewalDateRequest
    ) async throws -> AppStoreAPI.ExtendRenewalDateResponse {
        try await send(
            .PUT,
            "/inApps/v1/subscriptions/extend/\(Self.pathSegment(originalTransactionId))",
            body: try JSONEncoder().encode(request),
            endpoint: .extendSubscriptionRenewalDate
        )
    }

    /// Extend Subscription Renewal Dates for All Active Subscribers: `POST /inApps/v1/subscriptions/extend/mass`.
    /// Apple: "Because the endpoint runs asynchronously, this response means the App Store received your request and
    /// is processing it. The request may take multiple hours or days to complete"; "If you reuse the
    /// requestIdentifier to call the endpoint again, the server responds with 200."
    public func extendRenewalDatesForAllActiveSubscribers(
        _ request: AppStoreAPI.MassExtendRenewalDateRequest
    ) async throws -> AppStoreAPI.MassExtendRenewalDateResponse {
        try await send(
            .POST,
            "/inApps/v1/subscriptions/extend/mass",
            body: try JSONEncoder().encode(request),
            endpoint: .extendRenewalDatesForAllActiveSubscribers
        )
    }

    /// Get Status of Subscription Renewal Date Extensions:
    /// `GET /inApps/v1/subscriptions/extend/mass/{productId}/{requestIdentifier}`. Apple: "Checks whether a renewal
    /// date extension request completed, and provides the final count of successful or failed extensions."
    public func renewalExtensionStatus(productId: String, requestIdentifier: String) async throws -> AppStoreAPI.MassExtendRenewalDateStatusResponse {
        try await send(
            .GET,
            "/inApps/v1/subscriptions/extend/mass/\(Self.pathSegment(productId))/\(Self.pathSegment(requestIdentifier))",
            body: nil,
            endpoint: .getStatusOfSubscriptionRenewalDateExtensions
        )
    }

    /// Set App Account Token: `PUT /inApps/v1/transactions/{originalTransactionId}/appAccountToken` with an
    /// `UpdateAppAccountTokenRequest`. Apple answers 200 with no body; it refuses a transaction id that is not an
    /// original one (`TransactionIdIsNotOriginalTransactionIdError`) and a purchase obtained through Family Sharing
    /// (`FamilyTransactionNotSupportedError`).
    public func setAppAccountToken(originalTransactionId: String, _ token: UUID) async throws {
        let _: AppStoreAPI.NoContent = try await send(
            .PUT,
            "/inApps/v1/transactions/\(Self.pathSegment(originalTransactionId))/appAccountToken",
            body: try JSONEncoder().encode(AppStoreAPI.UpdateAppAccountTokenRequest(appAccountToken: token)),
            endpoint: .setAppAccountToken
        )
    }

    /// One path segment, percent-encoded: an identifier never adds a segment or a query, and a product id's dots,
    /// dashes and underscores stay as they are.
    static func pathSegment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: segmentAllowed) ?? text
    }

    private static let segmentAllowed = CharacterSet.urlPathAllowed.subtracting(CharacterSet(charactersIn: "/;"))
}
