import Foundation
import Logging
import PostgresNIO
import ReclaimDomain

/// `reclaim.subscriptions`: the latest state of each subscription. The rules of how a notification changes
/// it live in the domain (``SubscriptionState/apply(_:)``); this type only loads and stores rows.
public enum SubscriptionStore {
    /// The subscription's row, created empty if new, locked until the caller's transaction ends: jobs for
    /// the same subscriber run one after the other, so two of them never both see "no live offer".
    public static func lock(
        bundleId: String,
        environment: String,
        originalTransactionId: String,
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> SubscriptionState {
        // DO UPDATE (not DO NOTHING) so that an existing row is locked and returned in the same round trip.
        let rows = try await connection.query(
            """
            INSERT INTO reclaim.subscriptions AS s (bundle_id, environment, original_transaction_id)
            VALUES (\(bundleId), \(environment), \(originalTransactionId))
            ON CONFLICT (bundle_id, environment, original_transaction_id) DO UPDATE SET bundle_id = s.bundle_id
            RETURNING \(unescaped: columns)
            """,
            logger: logger
        )
        for try await row in rows { return try state(from: row) }
        throw PostgresRowMissing(what: "subscription \(originalTransactionId)")
    }

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

    /// Writes every field of `state` to its row.
    public static func save(_ state: SubscriptionState, connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            UPDATE reclaim.subscriptions SET
                app_account_token = \(state.appAccountToken), product_id = \(state.productId),
                subscription_group_id = \(state.subscriptionGroupId), status = \(state.status.rawValue),
                auto_renew = \(state.autoRenew), auto_renew_product_id = \(state.autoRenewProductId),
                expires_at = \(state.expiresAt), expiration_intent = \(state.expirationIntent.map(Int16.init)),
                in_billing_retry = \(state.inBillingRetry), grace_period_expires_at = \(state.gracePeriodExpiresAt),
                eligible_win_back_offer_ids = \(state.eligibleWinBackOfferIds), storefront = \(state.storefront),
                first_purchase_at = \(state.firstPurchaseAt), last_transaction_id = \(state.lastTransactionId),
                last_notification_type = \(state.lastNotificationType), last_subtype = \(state.lastSubtype),
                last_signed_date = \(state.lastSignedDate), last_notification_uuid = \(state.lastNotificationUUID),
                updated_at = now()
            WHERE bundle_id = \(state.bundleId) AND environment = \(state.environment)
              AND original_transaction_id = \(state.originalTransactionId)
            """,
            logger: logger
        )
    }

    private static let columns = """
        bundle_id, environment, original_transaction_id, app_account_token, product_id, subscription_group_id, status,
        auto_renew, auto_renew_product_id, expires_at, expiration_intent, in_billing_retry, grace_period_expires_at,
        eligible_win_back_offer_ids, storefront, first_purchase_at, last_transaction_id, last_notification_type,
        last_subtype, last_signed_date, last_notification_uuid
        """

    private static func state(from row: PostgresRow) throws -> SubscriptionState {
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
