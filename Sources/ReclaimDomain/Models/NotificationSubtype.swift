/// `subtype` of an App Store Server Notification V2; unknown values are kept as they are.
public struct NotificationSubtype: AppleStringValue {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let initialBuy: Self = "INITIAL_BUY"
    public static let resubscribe: Self = "RESUBSCRIBE"
    public static let downgrade: Self = "DOWNGRADE"
    public static let upgrade: Self = "UPGRADE"
    public static let autoRenewEnabled: Self = "AUTO_RENEW_ENABLED"
    public static let autoRenewDisabled: Self = "AUTO_RENEW_DISABLED"
    public static let voluntary: Self = "VOLUNTARY"
    public static let billingRetry: Self = "BILLING_RETRY"
    public static let priceIncrease: Self = "PRICE_INCREASE"
    public static let gracePeriod: Self = "GRACE_PERIOD"
    public static let pending: Self = "PENDING"
    public static let accepted: Self = "ACCEPTED"
    public static let billingRecovery: Self = "BILLING_RECOVERY"
    public static let productNotForSale: Self = "PRODUCT_NOT_FOR_SALE"
    public static let summary: Self = "SUMMARY"
    public static let failure: Self = "FAILURE"
    public static let unreported: Self = "UNREPORTED"

    /// Every value Apple documents, for checking configuration (decoding accepts any value).
    public static let documented: Set<String> = [
        "INITIAL_BUY",
        "RESUBSCRIBE",
        "DOWNGRADE",
        "UPGRADE",
        "AUTO_RENEW_ENABLED",
        "AUTO_RENEW_DISABLED",
        "VOLUNTARY",
        "BILLING_RETRY",
        "PRICE_INCREASE",
        "GRACE_PERIOD",
        "PENDING",
        "ACCEPTED",
        "BILLING_RECOVERY",
        "PRODUCT_NOT_FOR_SALE",
        "SUMMARY",
        "FAILURE",
        "UNREPORTED",
    ]
}
