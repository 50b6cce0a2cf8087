/// A decoded `signedAppTransactionInfo` (Apple's JWSAppTransactionDecodedPayload), as RESCIND_CONSENT's `appData`
/// carries it: the fields Reclaim reads.
///
/// Apple: "The App Store generates a single, globally unique `appTransactionId` for each Apple Account that downloads
/// your app and for each family group member … remains the same … if the customer redownloads the app on any device,
/// receives a refund, repurchases the app, or changes the storefront" (Get App Transaction Info). Transactions and
/// renewal info carry the same id ("App Store Server Notifications: 2.15.0 -"), which is how a RESCIND_CONSENT, which
/// names no transaction, finds the account's subscriptions.
public struct AppTransactionInfo: Codable, Sendable, Equatable {
    /// "The unique identifier of the app download transaction."
    public var appTransactionId: String?
    public var bundleId: String?
    public var appAppleId: Int64?
    /// The app transaction's environment: `Production`, `Sandbox` or `Xcode` (it has no `environment` field).
    public var receiptType: String?
    /// Milliseconds since 1970.
    public var receiptCreationDate: Int64?
    public var signedDate: Int64?

    public init(
        appTransactionId: String? = nil,
        bundleId: String? = nil,
        appAppleId: Int64? = nil,
        receiptType: String? = nil,
        receiptCreationDate: Int64? = nil,
        signedDate: Int64? = nil
    ) {
        self.appTransactionId = appTransactionId
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.receiptType = receiptType
        self.receiptCreationDate = receiptCreationDate
        self.signedDate = signedDate
    }
}
