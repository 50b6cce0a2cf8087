import Foundation

/// What an admin asked to grant (the body of `POST /v1/grants`), as stored in `reclaim.grants`.
public struct GrantRequest: Sendable, Equatable, Codable {
    public var bundleId: String
    public var appAccountToken: UUID?
    public var originalTransactionId: String?
    public var productId: String
    public var offerIdentifier: String
    public var reason: String
    public var campaign: String

    public init(
        bundleId: String,
        appAccountToken: UUID?,
        originalTransactionId: String?,
        productId: String,
        offerIdentifier: String,
        reason: String,
        campaign: String
    ) {
        self.bundleId = bundleId
        self.appAccountToken = appAccountToken
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.offerIdentifier = offerIdentifier
        self.reason = reason
        self.campaign = campaign
    }
}
