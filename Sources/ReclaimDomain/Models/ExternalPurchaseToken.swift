/// The `externalPurchaseToken` body of an EXTERNAL_PURCHASE_TOKEN notification.
public struct ExternalPurchaseToken: Codable, Sendable, Equatable {
    public var externalPurchaseId: String?
    /// UNIX milliseconds.
    public var tokenCreationDate: Int64?
    public var appAppleId: Int64?
    public var bundleId: String?

    public init(
        externalPurchaseId: String? = nil,
        tokenCreationDate: Int64? = nil,
        appAppleId: Int64? = nil,
        bundleId: String? = nil
    ) {
        self.externalPurchaseId = externalPurchaseId
        self.tokenCreationDate = tokenCreationDate
        self.appAppleId = appAppleId
        self.bundleId = bundleId
    }
}
