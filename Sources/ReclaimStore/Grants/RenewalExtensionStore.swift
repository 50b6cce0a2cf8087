import Foundation
import Logging
import PostgresNIO
import ReclaimDomain

/// An extension grant as stored (`reclaim.renewal_extensions`), with Apple's outcome so far.
public struct StoredExtension: Sendable, Equatable {
    public var id: UUID
    public var bundleId: String
    public var environment: String
    public var originalTransactionId: String
    public var idempotencyKey: String
    /// nil once the subscriber is forgotten.
    public var requestSHA256: [UInt8]?
    public var reason: String
    public var campaign: String
    public var extendByDays: Int
    public var extendReasonCode: Int
    /// pending, extended or refused.
    public var status: String
    public var createdAt: Date
    public var settledAt: Date?
    public var effectiveDate: Date?
    public var appleStatus: Int?
    public var appleError: String?
}

/// `reclaim.renewal_extensions`: make-goods granted through `POST /v1/grants` (kind extension) and Apple's outcome.
public enum RenewalExtensionStore {
    static let columns = """
        id, bundle_id, environment, original_transaction_id, idempotency_key, request_sha256, reason, campaign, extend_by_days,
        extend_reason_code, status, created_at, settled_at, effective_date, apple_status, apple_error
        """

    private static func decode(_ rows: PostgresRowSequence) async throws -> [StoredExtension] {
        var found: [StoredExtension] = []
        for try await row in rows {
            let r = try row.decode(
                (UUID, String, String, String, String, ByteBuffer?, String, String, Int, Int, String, Date, Date?, Date?, Int?, String?).self
            )
            found.append(
                StoredExtension(
                    id: r.0,
                    bundleId: r.1,
                    environment: r.2,
                    originalTransactionId: r.3,
                    idempotencyKey: r.4,
                    requestSHA256: r.5.map { Array(buffer: $0) },
                    reason: r.6,
                    campaign: r.7,
                    extendByDays: r.8,
                    extendReasonCode: r.9,
                    status: r.10,
                    createdAt: r.11,
                    settledAt: r.12,
                    effectiveDate: r.13,
                    appleStatus: r.14,
                    appleError: r.15
                )
            )
        }
        return found
    }

    /// The extension granted earlier with this Idempotency-Key for this app.
    public static func existing(
        bundleId: String,
        idempotencyKey: String,
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> StoredExtension? {
        try await decode(
            connection.query(
                """
                SELECT \(unescaped: columns) FROM reclaim.renewal_extensions
                WHERE bundle_id = \(bundleId) AND idempotency_key = \(idempotencyKey)
                """,
                logger: logger
            )
        ).first
    }

    /// One extension by id.
    public static func find(_ id: UUID, database: Database, logger: Logger) async throws -> StoredExtension? {
        try await database.withConnection(logger: logger) { connection in
            try await decode(
                connection.query("SELECT \(unescaped: columns) FROM reclaim.renewal_extensions WHERE id = \(id)", logger: logger)
            ).first
        }
    }

    /// When the subscription's renewal date was extended in the past year, as far as Reclaim knows: its own
    /// extensions Apple granted or is about to be asked for (pending ones count: the caller holds the subscription's
    /// lock, so two grants made at once cannot both pass for a third), and Apple's RENEWAL_EXTENDED notifications (which also tell of mass extensions and of
    /// extensions made outside Reclaim). An extension of Reclaim's whose notification came is counted once: the larger
    /// of the two counts stands, Apple's own answer being the last word.
    public static func extensionsInPastYear(of subscriber: SubscriberKey, connection: PostgresConnection, logger: Logger) async throws -> [Date] {
        let rows = try await connection.query(
            """
            SELECT coalesce(settled_at, created_at), 'reclaim' FROM reclaim.renewal_extensions
            WHERE bundle_id = \(subscriber.bundleId) AND environment = \(subscriber.environment)
              AND original_transaction_id = \(subscriber.originalTransactionId) AND status IN ('pending', 'extended')
              AND coalesce(settled_at, created_at) > now() - interval '365 days'
            UNION ALL
            SELECT signed_date, 'apple' FROM reclaim.notifications
            WHERE bundle_id = \(subscriber.bundleId) AND environment = \(subscriber.environment)
              AND original_transaction_id = \(subscriber.originalTransactionId) AND notification_type = 'RENEWAL_EXTENDED'
              AND signed_date > now() - interval '365 days'
            """,
            logger: logger
        )
        var ours: [Date] = []
        var apples: [Date] = []
        for try await (at, source) in rows.decode((Date, String).self) {
            if source == "reclaim" { ours.append(at) } else { apples.append(at) }
        }
        return apples.count >= ours.count ? apples : ours
    }

    /// Stores the grant and queues its call (`job`), in the caller's transaction; false when a grant with this
    /// Idempotency-Key appeared meanwhile (nothing was written).
    public static func create(
        id: UUID,
        _ request: ExtensionGrantRequest,
        idempotencyKey: String,
        adminKeyId: UUID,
        subscriber: SubscriberKey,
        job: NewJob,
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> Bool {
        let rows = try await connection.query(
            """
            INSERT INTO reclaim.renewal_extensions (id, bundle_id, environment, original_transaction_id, app_account_token, idempotency_key,
                                                    request_sha256, admin_key_id, reason, campaign, extend_by_days, extend_reason_code)
            VALUES (\(id), \(request.bundleId), \(subscriber.environment), \(subscriber.originalTransactionId), \(request.appAccountToken),
                    \(idempotencyKey), \(ByteBuffer(bytes: request.fingerprint)), \(adminKeyId), \(request.reason), \(request.campaign),
                    \(request.extendByDays), \(request.extendReasonCode))
            ON CONFLICT (bundle_id, idempotency_key) DO NOTHING
            RETURNING id
            """,
            logger: logger
        )
        var created = false
        for try await _ in rows { created = true }
        guard created else { return false }
        _ = try await JobQueue.enqueue(job, connection: connection, logger: logger)
        return true
    }

    /// Records Apple's answer: `extended` with the new expiration date, or `refused` with Apple's error.
    public static func settle(
        _ id: UUID,
        status: String,
        effectiveDate: Date? = nil,
        webOrderLineItemId: String? = nil,
        appleStatus: Int?,
        appleError: String?,
        connection: PostgresConnection,
        logger: Logger
    ) async throws {
        try await connection.query(
            """
            UPDATE reclaim.renewal_extensions
            SET status = \(status), settled_at = now(), effective_date = \(effectiveDate), web_order_line_item_id = \(webOrderLineItemId),
                apple_status = \(appleStatus), apple_error = \(appleError)
            WHERE id = \(id) AND status = 'pending'
            """,
            logger: logger
        )
    }

    /// Notes a failed attempt on a pending extension (Apple refused the key while it is rotated).
    public static func noteAttempt(_ id: UUID, appleStatus: Int?, appleError: String, database: Database, logger: Logger) async throws {
        try await database.withConnection(logger: logger) { connection in
            try await connection.query(
                """
                UPDATE reclaim.renewal_extensions SET apple_status = \(appleStatus), apple_error = \(appleError)
                WHERE id = \(id) AND status = 'pending'
                """,
                logger: logger
            )
        }
    }
}
