import Foundation
import Logging
import PostgresNIO
import ReclaimDomain

/// `reclaim.subscriptions`: the latest state of each subscription. The rules of how a notification changes
/// it live in the domain (``SubscriptionState/apply(_:)``); the worker reads and writes rows through
/// ``SubscriberStore``, this type reads them.
public enum SubscriptionStore {
    /// The subscription's row, or nil; not locked (for reads outside a job).
    public static func find(
        bundleId: String,
        environment: String,
        originalTransactionId: String,
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> SubscriptionState? {
        let rows = try await connection.query(
            """
            SELECT \(unescaped: columns) FROM reclaim.subscriptions
            WHERE bundle_id = \(bundleId) AND environment = \(environment) AND original_transaction_id = \(originalTransactionId)
            """,
            logger: logger
        )
        for try await row in rows { return try state(from: row) }
        return nil
    }

    static let columns = """
        bundle_id, environment, original_transaction_id, app_account_token, product_id, subscription_group_id, status,
        auto_renew, auto_renew_product_id, expires_at, expiration_intent, in_billing_retry, grace_period_expires_at,
        eligible_win_back_offer_ids, storefront, first_purchase_at, last_transaction_id, last_notification_type,
        last_subtype, last_signed_date, last_notification_uuid
        """

    static func state(from row: PostgresRow) throws -> SubscriptionState {
        let all = try row.decode(
            (
                String, String, String, UUID?, String?, String?, String, Bool?, String?, Date?, Int16?, Bool?, Date?, [String],
                String?, Date?, String?, String?, String?, Date?, UUID?
            ).self
        )
        var state = SubscriptionState(bundleId: all.0, environment: all.1, originalTransactionId: all.2)
        state.appAccountToken = all.3
        state.productId = all.4
        state.subscriptionGroupId = all.5
        state.status = SubscriptionState.Status(rawValue: all.6) ?? .unknown
        state.autoRenew = all.7
        state.autoRenewProductId = all.8
        state.expiresAt = all.9
        state.expirationIntent = all.10.map(Int.init)
        state.inBillingRetry = all.11
        state.gracePeriodExpiresAt = all.12
        state.eligibleWinBackOfferIds = all.13
        state.storefront = all.14
        state.firstPurchaseAt = all.15
        state.lastTransactionId = all.16
        state.lastNotificationType = all.17
        state.lastSubtype = all.18
        state.lastSignedDate = all.19
        state.lastNotificationUUID = all.20
        return state
    }
}
