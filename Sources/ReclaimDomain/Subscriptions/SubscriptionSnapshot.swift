import Foundation

/// What one notification says about its subscription: the state to keep in `reclaim.subscriptions`.
///
/// Pure: built from a verified notification; the store applies it only when it is newer (by
/// `signedDate`) than what it holds, since Apple does not guarantee delivery order.
public struct SubscriptionSnapshot: Sendable, Equatable {
    public enum Status: String, Sendable {
        case active, expired
        case billingRetry = "billing_retry"
        case gracePeriod = "grace_period"
        case revoked, unknown
    }

    public var bundleId: String
    public var environment: String
    public var originalTransactionId: String
    public var appAccountToken: UUID?
    public var productId: String?
    public var status: Status
    public var autoRenew: Bool?
    public var expiresAt: Date?
    public var notificationType: String
    public var subtype: String?
    public var signedDate: Date
    public var notificationUUID: UUID

    /// The snapshot a notification carries, or nil when it concerns no subscription (TEST, summaries, …).
    public init?(_ notification: VerifiedNotification, notificationUUID: UUID) {
        let payload = notification.payload
        guard let bundleId = payload.bundleId, let environment = payload.environment?.rawValue,
            let originalTransactionId = notification.originalTransactionId
        else { return nil }
        let transaction = notification.transaction
        self.bundleId = bundleId
        self.environment = environment
        self.originalTransactionId = originalTransactionId
        self.appAccountToken = notification.appAccountToken
        self.productId = transaction?.productId ?? notification.renewalInfo?.productId
        self.status = Self.status(apple: payload.data?.status, type: payload.notificationType.rawValue)
        self.autoRenew = notification.renewalInfo?.autoRenewStatus.map { $0 == 1 }
        self.expiresAt = transaction?.expiresDate.map { Date(timeIntervalSince1970: Double($0) / 1000) }
        self.notificationType = payload.notificationType.rawValue
        self.subtype = payload.subtype?.rawValue
        self.signedDate = Date(timeIntervalSince1970: Double(payload.signedDate ?? 0) / 1000)
        self.notificationUUID = notificationUUID
    }

    /// Apple's `data.status` (1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked), or
    /// what the notification type implies when Apple sent none.
    static func status(apple: Int64?, type: String) -> Status {
        switch apple {
        case 1: return .active
        case 2: return .expired
        case 3: return .billingRetry
        case 4: return .gracePeriod
        case 5: return .revoked
        default:
            switch type {
            case "EXPIRED", "GRACE_PERIOD_EXPIRED": return .expired
            case "REVOKE", "REFUND": return .revoked
            case "SUBSCRIBED", "DID_RENEW", "OFFER_REDEEMED": return .active
            default: return .unknown
            }
        }
    }
}
