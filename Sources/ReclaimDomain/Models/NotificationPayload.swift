/// The decoded payload of an App Store Server Notification V2 (`signedPayload`).
///
/// Exactly one of `data`, `summary`, `externalPurchaseToken` and `appData` is present in what Apple sends;
/// all are optional here so that a new kind of notification still decodes.
public struct NotificationPayload: Codable, Sendable, Equatable {
    public var notificationType: NotificationType
    public var subtype: NotificationSubtype?
    /// Same on every retry of one notification: the deduplication key.
    public var notificationUUID: String
    public var version: String?
    /// UNIX milliseconds; optional so that a payload missing it still decodes (verification then uses the clock).
    public var signedDate: Int64?
    public var data: NotificationData?
    public var summary: NotificationSummary?
    public var externalPurchaseToken: ExternalPurchaseToken?
    public var appData: NotificationAppData?

    public init(
        notificationType: NotificationType,
        subtype: NotificationSubtype? = nil,
        notificationUUID: String,
        version: String? = "2.0",
        signedDate: Int64? = nil,
        data: NotificationData? = nil,
        summary: NotificationSummary? = nil,
        externalPurchaseToken: ExternalPurchaseToken? = nil,
        appData: NotificationAppData? = nil
    ) {
        self.notificationType = notificationType
        self.subtype = subtype
        self.notificationUUID = notificationUUID
        self.version = version
        self.signedDate = signedDate
        self.data = data
        self.summary = summary
        self.externalPurchaseToken = externalPurchaseToken
        self.appData = appData
    }

    /// The bundle id, whichever of the four bodies carries it.
    public var bundleId: String? {
        data?.bundleId ?? summary?.bundleId ?? externalPurchaseToken?.bundleId ?? appData?.bundleId
    }

    /// The appAppleId, whichever of the four bodies carries it.
    public var appAppleId: Int64? {
        data?.appAppleId ?? summary?.appAppleId ?? externalPurchaseToken?.appAppleId ?? appData?.appAppleId
    }

    /// The environment, whichever body carries it.
    ///
    /// An external purchase token has no environment field; Apple marks sandbox tokens by an
    /// `externalPurchaseId` starting with "SANDBOX" (unconfirmed), so that prefix decides.
    public var environment: AppStoreEnvironment? {
        if let environment = data?.environment ?? summary?.environment ?? appData?.environment { return environment }
        if let token = externalPurchaseToken {
            return (token.externalPurchaseId ?? "").hasPrefix("SANDBOX") ? .sandbox : .production
        }
        return nil
    }
}
