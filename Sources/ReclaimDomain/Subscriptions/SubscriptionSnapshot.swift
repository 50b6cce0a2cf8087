import Foundation

/// What one verified notification says about its subscription: the input of
/// ``SubscriptionState/apply(_:)`` and of the campaign rules.
///
/// Pure: built from a verified notification. It keeps the decoded transaction and renewal info whole,
/// because the state takes every field of the newest one Apple sent.
public struct SubscriptionSnapshot: Sendable, Equatable {
    public var bundleId: String
    public var environment: String
    public var originalTransactionId: String
    public var notificationType: String
    public var subtype: String?
    public var signedDate: Date
    public var notificationUUID: UUID
    /// Apple's `data.status`: 1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked.
    public var appleStatus: Int64?
    public var transaction: TransactionInfo?
    public var renewalInfo: RenewalInfo?

    public init(
        bundleId: String,
        environment: String,
        originalTransactionId: String,
        notificationType: String,
        subtype: String? = nil,
        signedDate: Date,
        notificationUUID: UUID,
        appleStatus: Int64? = nil,
        transaction: TransactionInfo? = nil,
        renewalInfo: RenewalInfo? = nil
    ) {
        self.bundleId = bundleId
        self.environment = environment
        self.originalTransactionId = originalTransactionId
        self.notificationType = notificationType
        self.subtype = subtype
        self.signedDate = signedDate
        self.notificationUUID = notificationUUID
        self.appleStatus = appleStatus
        self.transaction = transaction
        self.renewalInfo = renewalInfo
    }

    /// The snapshot a notification carries, or nil when it concerns no subscription (TEST, summaries, …).
    public init?(_ notification: VerifiedNotification, notificationUUID: UUID) {
        let payload = notification.payload
        guard let bundleId = payload.bundleId, let environment = payload.environment?.rawValue,
            let originalTransactionId = notification.originalTransactionId
        else { return nil }
        self.init(
            bundleId: bundleId,
            environment: environment,
            originalTransactionId: originalTransactionId,
            notificationType: payload.notificationType.rawValue,
            subtype: payload.subtype?.rawValue,
            signedDate: Date(unixMilliseconds: payload.signedDate ?? 0),
            notificationUUID: notificationUUID,
            appleStatus: payload.data?.status,
            transaction: notification.transaction,
            renewalInfo: notification.renewalInfo
        )
    }

    /// The app's user id from the transaction, else the renewal info; nil when absent or not a UUID.
    /// `UUID` ignores case, so a token Apple relays in upper case is the same subscriber.
    /// The app account (`appTransactionId`) the transaction or renewal info names, if either does.
    public var appTransactionId: String? {
        transaction?.appTransactionId ?? renewalInfo?.appTransactionId
    }

    public var appAccountToken: UUID? {
        (transaction?.appAccountToken ?? renewalInfo?.appAccountToken).flatMap(UUID.init(uuidString:))
    }

    /// The status the notification implies: REFUND is `refunded` whatever `data.status` says; otherwise
    /// Apple's `data.status`, or what the type implies when Apple sent none.
    public var status: SubscriptionState.Status {
        if notificationType == "REFUND" { return .refunded }
        switch appleStatus {
        case 1: return .active
        case 2: return .expired
        case 3: return .billingRetry
        case 4: return .gracePeriod
        case 5: return .revoked
        default:
            switch notificationType {
            case "EXPIRED", "GRACE_PERIOD_EXPIRED": return .expired
            case "REVOKE": return .revoked
            case "SUBSCRIBED", "DID_RENEW", "OFFER_REDEEMED": return .active
            case "DID_FAIL_TO_RENEW": return subtype == "GRACE_PERIOD" ? .gracePeriod : .billingRetry
            default: return .unknown
            }
        }
    }
}

extension Date {
    /// The UNIX milliseconds of 9999-12-31T23:59:59.999Z: Apple's dates are clamped to ±this.
    ///
    /// A signed payload's numbers are still outside input: PostgresNIO binds a `Date` as `Int64(seconds * 1e6)`,
    /// which traps beyond about year 294,000, so a date past year 9999 (never a real one) is clamped here.
    public static let unixMillisecondsBound: Int64 = 253_402_300_799_999

    /// A date from Apple's UNIX milliseconds, clamped to ±``unixMillisecondsBound``.
    public init(unixMilliseconds: Int64) {
        let clamped = min(max(unixMilliseconds, -Self.unixMillisecondsBound), Self.unixMillisecondsBound)
        self.init(timeIntervalSince1970: Double(clamped) / 1000)
    }

    /// Whole UNIX seconds of this date, or nil when it is not finite or beyond ±(2^53) s; never traps.
    public var unixSecondsIfRepresentable: Int64? {
        let seconds = timeIntervalSince1970.rounded(.down)
        guard seconds.isFinite, abs(seconds) <= 9_007_199_254_740_992 else { return nil }
        return Int64(exactly: seconds)
    }
}
