/// The `data` body of a notification: the app, the environment and the signed transaction and renewal info.
public struct NotificationData: Codable, Sendable, Equatable {
    public var environment: AppStoreEnvironment?
    /// Apple says it may be absent in Sandbox.
    public var appAppleId: Int64?
    public var bundleId: String?
    public var bundleVersion: String?
    /// Compact JWS of a ``TransactionInfo``; verify it before use.
    public var signedTransactionInfo: String?
    /// Compact JWS of a ``RenewalInfo``; verify it before use.
    public var signedRenewalInfo: String?
    /// 1 active, 2 expired, 3 billing retry, 4 billing grace period, 5 revoked.
    public var status: Int64?
    public var consumptionRequestReason: String?

    public init(
        environment: AppStoreEnvironment? = nil,
        appAppleId: Int64? = nil,
        bundleId: String? = nil,
        bundleVersion: String? = nil,
        signedTransactionInfo: String? = nil,
        signedRenewalInfo: String? = nil,
        status: Int64? = nil,
        consumptionRequestReason: String? = nil
    ) {
        self.environment = environment
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.bundleVersion = bundleVersion
        self.signedTransactionInfo = signedTransactionInfo
        self.signedRenewalInfo = signedRenewalInfo
        self.status = status
        self.consumptionRequestReason = consumptionRequestReason
    }
}
