/// The `appData` body of a notification about the app rather than a purchase (e.g. RESCIND_CONSENT).
public struct NotificationAppData: Codable, Sendable, Equatable {
    public var appAppleId: Int64?
    public var bundleId: String?
    public var environment: AppStoreEnvironment?
    /// Compact JWS of the app transaction, verified with the notification (``VerifiedNotification/appTransaction``).
    public var signedAppTransactionInfo: String?

    public init(
        appAppleId: Int64? = nil,
        bundleId: String? = nil,
        environment: AppStoreEnvironment? = nil,
        signedAppTransactionInfo: String? = nil
    ) {
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.environment = environment
        self.signedAppTransactionInfo = signedAppTransactionInfo
    }
}
