import Foundation
import Logging
import PostgresNIO
import ReclaimDomain

/// `reclaim.subscriptions`: the latest state of each subscription.
public enum SubscriptionStore {
    /// Applies `snapshot` unless the row already holds a newer notification (by signedDate):
    /// notifications can arrive out of order, and a late one must not roll the state back.
    /// Returns whether the row changed.
    @discardableResult
    public static func apply(_ snapshot: SubscriptionSnapshot, connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let rows = try await connection.query(
            """
            INSERT INTO reclaim.subscriptions AS s (
                bundle_id, environment, original_transaction_id, app_account_token, product_id, status, auto_renew,
                expires_at, last_notification_type, last_subtype, last_signed_date, last_notification_uuid)
            VALUES (
                \(snapshot.bundleId), \(snapshot.environment), \(snapshot.originalTransactionId), \(snapshot.appAccountToken),
                \(snapshot.productId), \(snapshot.status.rawValue), \(snapshot.autoRenew), \(snapshot.expiresAt),
                \(snapshot.notificationType), \(snapshot.subtype), \(snapshot.signedDate), \(snapshot.notificationUUID))
            ON CONFLICT (bundle_id, environment, original_transaction_id) DO UPDATE SET
                app_account_token = coalesce(EXCLUDED.app_account_token, s.app_account_token),
                product_id = coalesce(EXCLUDED.product_id, s.product_id),
                status = EXCLUDED.status,
                auto_renew = coalesce(EXCLUDED.auto_renew, s.auto_renew),
                expires_at = coalesce(EXCLUDED.expires_at, s.expires_at),
                last_notification_type = EXCLUDED.last_notification_type,
                last_subtype = EXCLUDED.last_subtype,
                last_signed_date = EXCLUDED.last_signed_date,
                last_notification_uuid = EXCLUDED.last_notification_uuid,
                updated_at = now()
            WHERE s.last_signed_date IS NULL OR s.last_signed_date <= EXCLUDED.last_signed_date
            RETURNING 1
            """,
            logger: logger
        )
        for try await _ in rows { return true }
        return false
    }
}
