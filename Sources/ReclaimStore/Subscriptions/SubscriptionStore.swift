import Foundation
import Logging
import PostgresNIO
import ReclaimDomain

/// `reclaim.subscriptions`'s row: its columns and their one decoder. The rules of how a notification changes
/// the state live in the domain (``SubscriptionState/apply(_:)``); the worker reads and writes rows through
/// ``SubscriberStore``, a grant locks one through ``GrantStore``.
public enum SubscriptionStore {
    static let columns = """
        bundle_id, environment, original_transaction_id, app_account_token, product_id, subscription_group_id, status,
        auto_renew, auto_renew_product_id, expires_at, expiration_intent, in_billing_retry, grace_period_expires_at,
        eligible_win_back_offer_ids, storefront, first_purchase_at, last_transaction_id, last_notification_type,
        last_subtype, last_signed_date, last_notification_uuid
        """

    /// The one decoder of a subscription row: the first ``columns`` of `row`, in their order.
    static func state(from row: PostgresRow) throws -> SubscriptionState {
        try state(from: row.makeRandomAccess())
    }

    static func state(from row: PostgresRandomAccessRow) throws -> SubscriptionState {
        var state = SubscriptionState(
            bundleId: try row[0].decode(String.self),
            environment: try row[1].decode(String.self),
            originalTransactionId: try row[2].decode(String.self)
        )
        state.appAccountToken = try row[3].decode(UUID?.self)
        state.productId = try row[4].decode(String?.self)
        state.subscriptionGroupId = try row[5].decode(String?.self)
        state.status = SubscriptionState.Status(rawValue: try row[6].decode(String.self)) ?? .unknown
        state.autoRenew = try row[7].decode(Bool?.self)
        state.autoRenewProductId = try row[8].decode(String?.self)
        state.expiresAt = try row[9].decode(Date?.self)
        state.expirationIntent = try row[10].decode(Int16?.self).map(Int.init)
        state.inBillingRetry = try row[11].decode(Bool?.self)
        state.gracePeriodExpiresAt = try row[12].decode(Date?.self)
        state.eligibleWinBackOfferIds = try row[13].decode([String].self)
        state.storefront = try row[14].decode(String?.self)
        state.firstPurchaseAt = try row[15].decode(Date?.self)
        state.lastTransactionId = try row[16].decode(String?.self)
        state.lastNotificationType = try row[17].decode(String?.self)
        state.lastSubtype = try row[18].decode(String?.self)
        state.lastSignedDate = try row[19].decode(Date?.self)
        state.lastNotificationUUID = try row[20].decode(UUID?.self)
        return state
    }

    /// How many columns a subscription row has (``columns``): what follows them in a row is another table's.
    static let columnCount = 21
}
