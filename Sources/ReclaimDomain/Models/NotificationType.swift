/// `notificationType` of an App Store Server Notification V2; unknown values are kept as they are.
public struct NotificationType: AppleStringValue {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let subscribed: Self = "SUBSCRIBED"
    public static let didChangeRenewalPref: Self = "DID_CHANGE_RENEWAL_PREF"
    public static let didChangeRenewalStatus: Self = "DID_CHANGE_RENEWAL_STATUS"
    public static let offerRedeemed: Self = "OFFER_REDEEMED"
    public static let didRenew: Self = "DID_RENEW"
    public static let expired: Self = "EXPIRED"
    public static let didFailToRenew: Self = "DID_FAIL_TO_RENEW"
    public static let gracePeriodExpired: Self = "GRACE_PERIOD_EXPIRED"
    public static let priceIncrease: Self = "PRICE_INCREASE"
    public static let refund: Self = "REFUND"
    public static let refundDeclined: Self = "REFUND_DECLINED"
    public static let consumptionRequest: Self = "CONSUMPTION_REQUEST"
    public static let renewalExtended: Self = "RENEWAL_EXTENDED"
    public static let revoke: Self = "REVOKE"
    public static let test: Self = "TEST"
    public static let renewalExtension: Self = "RENEWAL_EXTENSION"
    public static let refundReversed: Self = "REFUND_REVERSED"
    public static let externalPurchaseToken: Self = "EXTERNAL_PURCHASE_TOKEN"
    public static let oneTimeCharge: Self = "ONE_TIME_CHARGE"
    public static let rescindConsent: Self = "RESCIND_CONSENT"
    public static let metadataUpdate: Self = "METADATA_UPDATE"
    public static let migration: Self = "MIGRATION"
    public static let priceChange: Self = "PRICE_CHANGE"

    /// Every value Apple documents, for checking configuration (decoding accepts any value).
    public static let documented: Set<String> = [
        "SUBSCRIBED",
        "DID_CHANGE_RENEWAL_PREF",
        "DID_CHANGE_RENEWAL_STATUS",
        "OFFER_REDEEMED",
        "DID_RENEW",
        "EXPIRED",
        "DID_FAIL_TO_RENEW",
        "GRACE_PERIOD_EXPIRED",
        "PRICE_INCREASE",
        "REFUND",
        "REFUND_DECLINED",
        "CONSUMPTION_REQUEST",
        "RENEWAL_EXTENDED",
        "REVOKE",
        "TEST",
        "RENEWAL_EXTENSION",
        "REFUND_REVERSED",
        "EXTERNAL_PURCHASE_TOKEN",
        "ONE_TIME_CHARGE",
        "RESCIND_CONSENT",
        "METADATA_UPDATE",
        "MIGRATION",
        "PRICE_CHANGE",
    ]
}
