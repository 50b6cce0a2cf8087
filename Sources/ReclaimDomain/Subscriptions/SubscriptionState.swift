import Foundation

/// The state Reclaim keeps of one subscription (a row of `reclaim.subscriptions`), built by applying
/// notifications in `signedDate` order.
///
/// Apple delivers notifications out of order and more than once, so ``apply(_:)`` takes a snapshot only
/// when it is newer than the last one applied: a late or replayed notification changes nothing.
public struct SubscriptionState: Sendable, Equatable {
    public enum Status: String, Sendable, CaseIterable {
        case active, expired
        case billingRetry = "billing_retry"
        case gracePeriod = "grace_period"
        case revoked, refunded, unknown
    }

    public var bundleId: String
    public var environment: String
    public var originalTransactionId: String
    /// Lowercase in the database (PostgreSQL's uuid); deliveries and signatures use the lowercase form.
    public var appAccountToken: UUID?
    public var productId: String?
    public var subscriptionGroupId: String?
    public var status: Status = .unknown
    public var autoRenew: Bool?
    public var autoRenewProductId: String?
    public var expiresAt: Date?
    public var expirationIntent: Int?
    public var inBillingRetry: Bool?
    public var gracePeriodExpiresAt: Date?
    public var eligibleWinBackOfferIds: [String] = []
    public var storefront: String?
    /// originalPurchaseDate: tenure is measured from it.
    public var firstPurchaseAt: Date?
    public var lastTransactionId: String?
    public var lastNotificationType: String?
    public var lastSubtype: String?
    public var lastSignedDate: Date?
    public var lastNotificationUUID: UUID?
    /// The app account's `appTransactionId` ("The unique identifier of the app download transaction"), from the
    /// newest transaction or renewal info carrying it: how a RESCIND_CONSENT, which names no transaction, finds it.
    public var appTransactionId: String?
    /// When a parent or guardian withdrew consent for the app (RESCIND_CONSENT); from then on no campaign, grant or
    /// cancel-sheet answer reaches the subscriber. Never cleared by a notification.
    public var consentRescindedAt: Date?
    /// The billing plan (`billingPlanType`, as Apple sends it: MONTHLY with a 12-month commitment, BILLED_UPFRONT);
    /// nil: unknown (no transaction named one).
    public var billingPlanType: String?
    /// The current period's number within the commitment, and how many it has (e.g. 3 of 12).
    public var billingPeriodNumber: Int?
    public var totalBillingPeriods: Int?
    /// When the commitment ends, and its price (milliunits).
    public var commitmentExpiresAt: Date?
    public var commitmentPrice: Int64?
    /// Whether the commitment renews at its end (renewal info's `commitmentInfo.commitmentAutoRenewStatus`); the
    /// monthly payments' own `autoRenew` says nothing of it.
    public var commitmentAutoRenew: Bool?

    /// A commitment that runs at `time` and ends without renewing: the customer keeps paying until its end. Only while
    /// the subscription is active: one that expired (a billing retry that ran out, a refund of the current period,
    /// which Apple says ends the commitment at once) has lapsed now, whatever end its last transaction named.
    public func commitmentEndsWithoutRenewal(after time: Date) -> Date? {
        guard status == .active, let end = commitmentExpiresAt, end > time, commitmentAutoRenew == false else { return nil }
        return end
    }

    /// A subscription Reclaim has not heard of yet.
    public init(bundleId: String, environment: String, originalTransactionId: String) {
        self.bundleId = bundleId
        self.environment = environment
        self.originalTransactionId = originalTransactionId
    }

    /// Whether the subscriber has or had a subscription in the app, which Apple requires before it lets them
    /// redeem a promotional offer: Reclaim has seen a transaction or renewal info of theirs.
    public var hasOrHadSubscription: Bool {
        lastTransactionId != nil || productId != nil || expiresAt != nil
    }

    /// Whether `snapshot` is a REFUND of a past billing period of a subscription on a commitment plan: the refunded
    /// transaction is not the latest one Reclaim knows (another transaction id) and its period ended before the
    /// latest one's (`expiresDate` earlier). Apple: "If the refund applies to a prior billing period, the system
    /// revokes the transaction for that specific period, but the commitment continues unaffected"; "If the refund
    /// applies to the current billing period, the commitment ends immediately."
    public func refundsPastPeriod(_ snapshot: SubscriptionSnapshot) -> Bool {
        guard snapshot.notificationType == "REFUND", let transaction = snapshot.transaction,
            transaction.commitmentInfo != nil || transaction.billingPlanType == "MONTHLY" || billingPeriodNumber != nil,
            let refunded = transaction.transactionId, let latest = lastTransactionId, refunded != latest,
            let refundedEnd = transaction.expiresDate.map(Date.init(unixMilliseconds:)), let currentEnd = expiresAt
        else { return false }
        return refundedEnd < currentEnd
    }

    /// Applies `snapshot` if it is newer (by `signedDate`) than the last one applied; returns whether it was.
    ///
    /// Fields of the transaction are taken from the snapshot's transaction when it carries one, fields of the
    /// renewal info from its renewal info: the newest of each is the truth, including fields it leaves out
    /// (an expirationIntent disappears on resubscription). Identity fields are never erased.
    @discardableResult
    public mutating func apply(_ snapshot: SubscriptionSnapshot) -> Bool {
        precondition(snapshot.originalTransactionId == originalTransactionId, "a snapshot of another subscription")
        if let lastSignedDate, snapshot.signedDate <= lastSignedDate { return false }
        if let token = snapshot.appAccountToken { appAccountToken = token }
        if refundsPastPeriod(snapshot) {
            // Apple, "Managing the life cycle of monthly subscriptions with a 12-month commitment": "If the refund
            // applies to a prior billing period, the system revokes the transaction for that specific period, but the
            // commitment continues unaffected. The customer remains subscribed and billing continues on schedule. …
            // don't interpret it as a commitment cancellation." The REFUND is stored (the subscriber's story lists
            // it, notifications_daily counts it); the subscription's status, product, expiry, last transaction,
            // period and commitment stay as they were. A refund of the current period ends it (below: `refunded`).
            lastNotificationType = snapshot.notificationType
            lastSubtype = snapshot.subtype
            lastSignedDate = snapshot.signedDate
            lastNotificationUUID = snapshot.notificationUUID
            return true
        }
        if let transaction = snapshot.transaction {
            productId = transaction.productId ?? productId
            subscriptionGroupId = transaction.subscriptionGroupIdentifier ?? subscriptionGroupId
            expiresAt = transaction.expiresDate.map(Date.init(unixMilliseconds:)) ?? expiresAt
            storefront = transaction.storefront ?? storefront
            firstPurchaseAt = transaction.originalPurchaseDate.map(Date.init(unixMilliseconds:)) ?? firstPurchaseAt
            lastTransactionId = transaction.transactionId ?? lastTransactionId
            appTransactionId = transaction.appTransactionId ?? appTransactionId
            billingPlanType = transaction.billingPlanType ?? billingPlanType
            if let commitment = transaction.commitmentInfo {
                billingPeriodNumber = commitment.billingPeriodNumber
                totalBillingPeriods = commitment.totalBillingPeriods
                commitmentExpiresAt = commitment.commitmentExpiresDate.map(Date.init(unixMilliseconds:))
                commitmentPrice = commitment.commitmentPrice
            } else if let plan = transaction.billingPlanType, plan != "MONTHLY" {
                // A plan without a commitment (the customer moved to BILLED_UPFRONT): the old commitment is over.
                billingPeriodNumber = nil
                totalBillingPeriods = nil
                commitmentExpiresAt = nil
                commitmentPrice = nil
                commitmentAutoRenew = nil
            }
        }
        if let renewal = snapshot.renewalInfo {
            if productId == nil { productId = renewal.productId }
            autoRenew = renewal.autoRenewStatus.map { $0 == 1 }
            autoRenewProductId = renewal.autoRenewProductId
            expirationIntent = renewal.expirationIntent.map(Int.init)
            inBillingRetry = renewal.isInBillingRetryPeriod
            gracePeriodExpiresAt = renewal.gracePeriodExpiresDate.map(Date.init(unixMilliseconds:))
            eligibleWinBackOfferIds = renewal.eligibleWinBackOfferIds ?? []
            appTransactionId = renewal.appTransactionId ?? appTransactionId
            commitmentAutoRenew = renewal.commitmentInfo?.commitmentAutoRenewStatus.map { $0 == 1 }
        }
        status = snapshot.status
        lastNotificationType = snapshot.notificationType
        lastSubtype = snapshot.subtype
        lastSignedDate = snapshot.signedDate
        lastNotificationUUID = snapshot.notificationUUID
        return true
    }
}
