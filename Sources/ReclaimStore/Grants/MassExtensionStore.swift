import Foundation
import Logging
import PostgresNIO
import ReclaimDomain

/// An outage make-goods request as stored (`reclaim.mass_extensions`): one product, with what Apple last said of it.
public struct StoredMassExtension: Sendable, Equatable {
    public var bundleId: String
    public var environment: String
    public var requestIdentifier: String
    public var productId: String
    public var extendByDays: Int
    public var extendReasonCode: Int
    public var storefrontCountryCodes: [String]?
    public var reason: String
    public var requestedAt: Date
    public var acceptedAt: Date?
    public var appleError: String?
    public var completeDate: Date?
    public var succeededCount: Int64?
    public var failedCount: Int64?
    public var summaryNotificationUUID: UUID?
    /// The RENEWAL_EXTENDED notifications of this product stored since the request (filled by ``MassExtensionStore/find(bundleId:environment:requestIdentifier:database:logger:)``).
    public var extendedNotifications: Int64 = 0

    public var isComplete: Bool { completeDate != nil }

    /// A request about to be made: what Apple will be asked.
    public init(
        bundleId: String,
        environment: String,
        requestIdentifier: String,
        productId: String,
        extendByDays: Int,
        extendReasonCode: Int,
        storefrontCountryCodes: [String]?,
        reason: String,
        requestedAt: Date
    ) {
        self.bundleId = bundleId
        self.environment = environment
        self.requestIdentifier = requestIdentifier
        self.productId = productId
        self.extendByDays = extendByDays
        self.extendReasonCode = extendReasonCode
        self.storefrontCountryCodes = storefrontCountryCodes
        self.reason = reason
        self.requestedAt = requestedAt
    }
}

/// `reclaim.mass_extensions`: Apple's Extend Subscription Renewal Dates for All Active Subscribers, requested by
/// `reclaim extensions all`, its status and its summary notification.
public enum MassExtensionStore {
    /// How long after a mass extension completes a RENEWAL_EXTENDED of its product is still taken as one of its own
    /// (Apple retries a notification it could not deliver for up to three days, but it signs it when first sent).
    public static let afterCompletion: TimeInterval = 86_400

    /// Records a request before Apple is asked (so a crash between the two leaves the row, and running the command
    /// again with the same request identifier asks Apple with the same identifier, which Apple answers as the same
    /// request). Returns the stored row: the existing one when the identifier was used before.
    public static func record(_ request: StoredMassExtension, actor: String, database: Database, logger: Logger) async throws -> StoredMassExtension {
        try await database.query(
            """
            INSERT INTO reclaim.mass_extensions (bundle_id, environment, request_identifier, product_id, extend_by_days,
                extend_reason_code, storefront_country_codes, reason, actor)
            VALUES (\(request.bundleId), \(request.environment), \(request.requestIdentifier), \(request.productId),
                \(request.extendByDays), \(request.extendReasonCode), \(request.storefrontCountryCodes), \(request.reason), \(actor))
            ON CONFLICT (bundle_id, environment, request_identifier) DO NOTHING
            """,
            logger: logger
        )
        guard
            let stored = try await find(
                bundleId: request.bundleId,
                environment: request.environment,
                requestIdentifier: request.requestIdentifier,
                database: database,
                logger: logger
            )
        else { throw PostgresRowMissing(what: "the mass extension \(request.requestIdentifier)") }
        return stored
    }

    public static func find(
        bundleId: String,
        environment: String,
        requestIdentifier: String,
        database: Database,
        logger: Logger
    ) async throws -> StoredMassExtension? {
        let rows = try await database.query(
            """
            SELECT m.bundle_id, m.environment, m.request_identifier, m.product_id, m.extend_by_days, m.extend_reason_code,
                   m.storefront_country_codes, m.reason, m.requested_at, m.accepted_at, m.apple_error, m.complete_date,
                   m.succeeded_count, m.failed_count, m.summary_notification_uuid,
                   (SELECT count(*) FROM reclaim.notifications n
                    WHERE n.bundle_id = m.bundle_id AND n.environment = m.environment AND n.notification_type = 'RENEWAL_EXTENDED'
                      AND n.product_id = m.product_id AND n.signed_date >= m.requested_at)
            FROM reclaim.mass_extensions m
            WHERE m.bundle_id = \(bundleId) AND m.environment = \(environment) AND m.request_identifier = \(requestIdentifier)
            """,
            logger: logger
        )
        for try await row in rows {
            let r = try row.decode(
                (String, String, String, String, Int, Int, [String]?, String, Date, Date?, String?, Date?, Int64?, Int64?, UUID?, Int64).self
            )
            var found = StoredMassExtension(
                bundleId: r.0,
                environment: r.1,
                requestIdentifier: r.2,
                productId: r.3,
                extendByDays: r.4,
                extendReasonCode: r.5,
                storefrontCountryCodes: r.6,
                reason: r.7,
                requestedAt: r.8
            )
            found.acceptedAt = r.9
            found.appleError = r.10
            found.completeDate = r.11
            found.succeededCount = r.12
            found.failedCount = r.13
            found.summaryNotificationUUID = r.14
            found.extendedNotifications = r.15
            return found
        }
        return nil
    }

    /// Apple's answer to the request: accepted (200), or its refusal.
    public static func answered(_ request: StoredMassExtension, refusal: String?, database: Database, logger: Logger) async throws {
        try await database.query(
            """
            UPDATE reclaim.mass_extensions
            SET accepted_at = CASE WHEN \(refusal)::text IS NULL THEN coalesce(accepted_at, now()) END, apple_error = \(refusal)
            WHERE bundle_id = \(request.bundleId) AND environment = \(request.environment) AND request_identifier = \(request.requestIdentifier)
            """,
            logger: logger
        )
    }

    /// What Get Status of Subscription Renewal Date Extensions answered.
    public static func checked(
        _ request: StoredMassExtension,
        completeDate: Date?,
        succeeded: Int64?,
        failed: Int64?,
        database: Database,
        logger: Logger
    ) async throws {
        try await database.query(
            """
            UPDATE reclaim.mass_extensions
            SET checked_at = now(), complete_date = \(completeDate), succeeded_count = \(succeeded), failed_count = \(failed)
            WHERE bundle_id = \(request.bundleId) AND environment = \(request.environment) AND request_identifier = \(request.requestIdentifier)
            """,
            logger: logger
        )
    }

    /// A RENEWAL_EXTENSION/SUMMARY notification, matched to the request it names; false when Reclaim made no such
    /// request (one made from another tool: the notification is stored all the same).
    public static func matchSummary(
        _ summary: NotificationSummary,
        notificationUUID: UUID,
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> Bool {
        guard let bundleId = summary.bundleId, let environment = summary.environment?.rawValue, let id = summary.requestIdentifier else {
            return false
        }
        let rows = try await connection.query(
            """
            UPDATE reclaim.mass_extensions
            SET summary_notification_uuid = \(notificationUUID), summary_succeeded_count = \(summary.succeededCount),
                summary_failed_count = \(summary.failedCount)
            WHERE bundle_id = \(bundleId) AND environment = \(environment) AND request_identifier = \(id)
            RETURNING 1
            """,
            logger: logger
        )
        for try await _ in rows { return true }
        return false
    }

    /// Of these RENEWAL_EXTENDED notifications (by subscriber, product and Apple's signing time), those a mass
    /// extension of their product was under way for: requested before Apple signed it, and not completed more than
    /// ``afterCompletion`` before.
    public static func fromMassExtensions(
        _ extended: [(notificationUUID: UUID, bundleId: String, environment: String, productId: String, signedDate: Date)],
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> Set<UUID> {
        guard !extended.isEmpty else { return [] }
        let rows = try await connection.query(
            """
            SELECT e.uuid FROM unnest(\(extended.map(\.notificationUUID))::uuid[], \(extended.map(\.bundleId))::text[],
                                      \(extended.map(\.environment))::text[], \(extended.map(\.productId))::text[],
                                      \(extended.map(\.signedDate))::timestamptz[]) AS e(uuid, bundle, environment, product, signed)
            WHERE EXISTS (
                SELECT 1 FROM reclaim.mass_extensions m
                WHERE m.bundle_id = e.bundle AND m.environment = e.environment AND m.product_id = e.product
                  AND m.apple_error IS NULL AND m.requested_at <= e.signed
                  AND (m.complete_date IS NULL OR e.signed <= m.complete_date + make_interval(secs => \(afterCompletion))))
            """,
            logger: logger
        )
        var found: Set<UUID> = []
        for try await uuid in rows.decode(UUID.self) { found.insert(uuid) }
        return found
    }
}
