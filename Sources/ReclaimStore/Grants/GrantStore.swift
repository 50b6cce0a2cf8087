import Foundation
import Logging
import PostgresNIO
import ReclaimDomain

/// `reclaim.grants` and their offers. Every function runs in the caller's transaction.
public enum GrantStore {
    /// The grant made earlier with this Idempotency-Key for this app, with its offer.
    public static func existing(
        bundleId: String,
        idempotencyKey: String,
        connection: PostgresConnection,
        logger: Logger
    ) async throws
        -> StoredGrant?
    {
        let rows = try await connection.query(
            """
            SELECT g.id, g.app_account_token, g.original_transaction_id, g.product_id, g.offer_identifier, g.reason, g.campaign,
                   g.created_at, o.id, o.original_transaction_id, o.environment, o.deliverable_until, g.request_sha256,
                   g.message_identifier
            FROM reclaim.grants g LEFT JOIN reclaim.offers o ON o.grant_id = g.id
            WHERE g.bundle_id = \(bundleId) AND g.idempotency_key = \(idempotencyKey)
            """,
            logger: logger
        )
        for try await r in rows.decode(
            (UUID, UUID?, String?, String, String, String, String, Date, UUID?, String?, String?, Date?, ByteBuffer?, String?).self
        ) {
            return StoredGrant(
                id: r.0,
                request: GrantRequest(
                    bundleId: bundleId,
                    appAccountToken: r.1,
                    originalTransactionId: r.2,
                    productId: r.3,
                    offerIdentifier: r.4,
                    reason: r.5,
                    campaign: r.6,
                    messageIdentifier: r.13
                ),
                offerId: r.8,
                originalTransactionId: r.9,
                environment: r.10,
                deliverableUntil: r.11,
                createdAt: r.7,
                requestSHA256: r.12.map { Array(buffer: $0) }
            )
        }
        return nil
    }

    /// The subscription a grant is for, locked: by originalTransactionId, else the newest subscription of the app
    /// user (appAccountToken), optionally in one environment.
    public static func lockSubscription(
        for request: GrantRequest,
        connection: PostgresConnection,
        logger: Logger
    )
        async throws -> SubscriptionState?
    {
        try await lockSubscription(
            bundleId: request.bundleId,
            originalTransactionId: request.originalTransactionId,
            appAccountToken: request.appAccountToken,
            environment: request.environment,
            connection: connection,
            logger: logger
        )
    }

    /// The subscription named by `originalTransactionId`, else the newest of the app user `appAccountToken`,
    /// optionally in one environment, locked.
    public static func lockSubscription(
        bundleId: String,
        originalTransactionId: String?,
        appAccountToken: UUID?,
        environment: String?,
        connection: PostgresConnection,
        logger: Logger
    )
        async throws -> SubscriptionState?
    {
        let rows = try await connection.query(
            """
            SELECT \(unescaped: SubscriptionRow.columnList()) FROM reclaim.subscriptions
            WHERE bundle_id = \(bundleId)
              AND (\(originalTransactionId)::text IS NULL OR original_transaction_id = \(originalTransactionId))
              AND (\(appAccountToken)::uuid IS NULL OR app_account_token = \(appAccountToken))
              AND (\(environment)::text IS NULL OR environment = \(environment))
            ORDER BY updated_at DESC
            LIMIT 1
            FOR UPDATE
            """,
            logger: logger
        )
        for try await row in rows { return try SubscriptionRow.state(from: row) }
        return nil
    }

    /// Stores the grant and its offer (``OfferInsert``) in one statement; false when a grant with this
    /// Idempotency-Key appeared meanwhile (a concurrent request won: nothing was written).
    public static func create(
        id: UUID,
        _ request: GrantRequest,
        idempotencyKey: String,
        adminKeyId: UUID,
        for state: SubscriptionState,
        offer: NewOffer,
        triggeredAt: Date,
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> Bool {
        let row = OfferInsert.Row(
            offer: offer,
            subscriber: state.subscriber,
            appAccountToken: state.appAccountToken,
            source: nil,
            triggeredAt: triggeredAt
        )
        let query: PostgresQuery = """
            WITH g AS (
                INSERT INTO reclaim.grants (id, bundle_id, idempotency_key, app_account_token, original_transaction_id, product_id,
                                            offer_identifier, reason, campaign, admin_key_id, request_sha256, message_identifier)
                VALUES (\(id), \(request.bundleId), \(idempotencyKey), \(request.appAccountToken), \(request.originalTransactionId),
                        \(request.productId), \(request.offerIdentifier), \(request.reason), \(request.campaign), \(adminKeyId),
                        \(ByteBuffer(bytes: request.fingerprint)), \(request.messageIdentifier))
                ON CONFLICT (bundle_id, idempotency_key) DO NOTHING
                RETURNING id)
            \(OfferInsert.insert(where: "o.grant_id IN (SELECT id FROM g)"), with: [row])
            RETURNING id
            """
        let rows = try await connection.query(query, logger: logger)
        for try await _ in rows { return true }
        return false
    }
}
