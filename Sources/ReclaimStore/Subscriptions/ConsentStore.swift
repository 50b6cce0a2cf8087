import Foundation
import Logging
import PostgresNIO
import ReclaimDomain

/// RESCIND_CONSENT: "A notification type that indicates the parent or guardian has withdrawn consent for a child's app
/// usage." Apple asks: "When you receive this notification, immediately restrict the child's access to capabilities
/// that require parental or guardian consent and update your app's state accordingly" (Declared Age Range, "Requesting
/// people's age range information in your app"). Reclaim's part: no campaign, grant or cancel-sheet answer reaches the
/// account again, and its live offers are withdrawn.
public enum ConsentStore {
    /// One RESCIND_CONSENT: the app account (the signed app transaction's `appTransactionId`) and when.
    public struct Rescission: Sendable, Equatable {
        public var bundleId: String
        public var environment: String
        public var appTransactionId: String
        public var rescindedAt: Date
        public var notificationUUID: UUID

        public init(bundleId: String, environment: String, appTransactionId: String, rescindedAt: Date, notificationUUID: UUID) {
            self.bundleId = bundleId
            self.environment = environment
            self.appTransactionId = appTransactionId
            self.rescindedAt = rescindedAt
            self.notificationUUID = notificationUUID
        }
    }

    /// Records the withdrawal (the first of a repeated one stands), marks the account's subscriptions
    /// (`consent_rescinded_at`; a subscription that names the account later reads the withdrawal as it is locked:
    /// ``SubscriberStore/lockWithHistory(_:accounts:connection:logger:)``)
    /// and withdraws their live offers. Returns the subscriptions marked and the offers withdrawn.
    public static func rescind(
        _ rescission: Rescission,
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> (subscriptions: Int, offersWithdrawn: Int) {
        let r = rescission
        let rows = try await connection.query(
            """
            WITH c AS (
                INSERT INTO reclaim.rescinded_consents (bundle_id, environment, app_transaction_id, rescinded_at, notification_uuid)
                VALUES (\(r.bundleId), \(r.environment), \(r.appTransactionId), \(r.rescindedAt), \(r.notificationUUID))
                ON CONFLICT (bundle_id, environment, app_transaction_id) DO NOTHING
            ), s AS (
                UPDATE reclaim.subscriptions SET consent_rescinded_at = coalesce(consent_rescinded_at, \(r.rescindedAt)), updated_at = now()
                WHERE bundle_id = \(r.bundleId) AND environment = \(r.environment) AND app_transaction_id = \(r.appTransactionId)
                RETURNING bundle_id, environment, original_transaction_id
            ), o AS (
                UPDATE reclaim.offers o
                SET state = 'withdrawn', ended_at = now(),
                    end_reason = 'a parent or guardian withdrew consent for the app (RESCIND_CONSENT)'
                FROM s
                WHERE o.bundle_id = s.bundle_id AND o.environment = s.environment AND o.original_transaction_id = s.original_transaction_id
                  AND o.state IN ('ready', 'delivered')
                RETURNING o.id
            )
            SELECT (SELECT count(*) FROM s)::int, (SELECT count(*) FROM o)::int
            """,
            logger: logger
        )
        for try await (subscriptions, offers) in rows.decode((Int, Int).self) { return (subscriptions, offers) }
        return (0, 0)
    }

    /// When consent was withdrawn for this subscription's app account, if it was: a call queued before (an extension,
    /// an app account token) is then not sent.
    public static func rescindedAt(_ subscriber: SubscriberKey, database: Database, logger: Logger) async throws -> Date? {
        for row in try await database.query(
            """
            SELECT consent_rescinded_at FROM reclaim.subscriptions
            WHERE bundle_id = \(subscriber.bundleId) AND environment = \(subscriber.environment)
              AND original_transaction_id = \(subscriber.originalTransactionId)
            """,
            logger: logger
        ).rows {
            return try row.decode(Date?.self)
        }
        return nil
    }
}
