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
                   g.created_at, o.id, o.original_transaction_id, o.environment, o.deliverable_until, g.request_sha256
            FROM reclaim.grants g LEFT JOIN reclaim.offers o ON o.grant_id = g.id
            WHERE g.bundle_id = \(bundleId) AND g.idempotency_key = \(idempotencyKey)
            """,
            logger: logger
        )
        for try await r in rows.decode((UUID, UUID?, String?, String, String, String, String, Date, UUID?, String?, String?, Date?, ByteBuffer?).self)
        {
            return StoredGrant(
                id: r.0,
                request: GrantRequest(
                    bundleId: bundleId,
                    appAccountToken: r.1,
                    originalTransactionId: r.2,
                    productId: r.3,
                    offerIdentifier: r.4,
                    reason: r.5,
                    campaign: r.6
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
        let rows = try await connection.query(
            """
            SELECT \(unescaped: SubscriptionStore.columns) FROM reclaim.subscriptions
            WHERE bundle_id = \(request.bundleId)
              AND (\(request.originalTransactionId)::text IS NULL OR original_transaction_id = \(request.originalTransactionId))
              AND (\(request.appAccountToken)::uuid IS NULL OR app_account_token = \(request.appAccountToken))
              AND (\(request.environment)::text IS NULL OR environment = \(request.environment))
            ORDER BY updated_at DESC
            LIMIT 1
            FOR UPDATE
            """,
            logger: logger
        )
        for try await row in rows { return try SubscriptionStore.state(from: row) }
        return nil
    }

    /// Stores the grant and its offer in one statement; false when a grant with this Idempotency-Key appeared
    /// meanwhile (a concurrent request won: nothing was written).
    public static func create(
        id: UUID,
        _ request: GrantRequest,
        idempotencyKey: String,
        adminKeyId: UUID,
        offer: NewOffer,
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> Bool {
        let rows = try await connection.query(
            """
            WITH g AS (
                INSERT INTO reclaim.grants (id, bundle_id, idempotency_key, app_account_token, original_transaction_id, product_id,
                                            offer_identifier, reason, campaign, admin_key_id, request_sha256)
                VALUES (\(id), \(request.bundleId), \(idempotencyKey), \(request.appAccountToken), \(request.originalTransactionId),
                        \(request.productId), \(request.offerIdentifier), \(request.reason), \(request.campaign), \(adminKeyId),
                        \(ByteBuffer(bytes: request.fingerprint)))
                ON CONFLICT (bundle_id, idempotency_key) DO NOTHING
                RETURNING id)
            INSERT INTO reclaim.offers (
                id, grant_id, bundle_id, environment, original_transaction_id, app_account_token, campaign_id, triggered_at, priority,
                product_id, offer_identifier, key_id, nonce, signed_at, application_username, storekit1_signature, storekit2_jws,
                deliverable_until)
            SELECT \(offer.id), g.id, \(offer.bundleId), \(offer.environment), \(offer.originalTransactionId), \(offer.appAccountToken),
                   \(offer.campaignId), \(offer.triggeredAt), \(offer.priority), \(offer.productId), \(offer.offerIdentifier),
                   \(offer.signed.storeKit1.keyIdentifier), \(offer.signed.nonce), \(offer.signed.signedAt),
                   \(offer.signed.storeKit1.applicationUsername), \(offer.signed.storeKit1.signature), \(offer.signed.storeKit2JWS),
                   \(offer.deliverableUntil)
            FROM g
            RETURNING id
            """,
            logger: logger
        )
        for try await _ in rows { return true }
        return false
    }
}
