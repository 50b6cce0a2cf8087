import Foundation
import Logging
import PostgresNIO

/// What the rest of Reclaim asks of the erasures: whether an identifier was forgotten, and the key a withdrawal of
/// consent is kept under.
extension SubscriberErasure {
    /// SQL for the key under which `reclaim.rescinded_consents` keeps the app account of a withdrawal: the
    /// `appTransactionId` itself, or, once its subscriber was forgotten, `sha256:` and the hex of its one-way hash
    /// (``consentKey(_:)`` of the column or expression `appTransactionId`). A lookup matches either.
    public static func consentKey(_ appTransactionId: String) -> String {
        "'sha256:' || encode(reclaim.forgotten_hash('app_transaction_id', \(appTransactionId)), 'hex')"
    }

    /// When the identifier `lookup` names was forgotten (in its app, or in every app), if it was.
    static func forgottenAt(_ lookup: SubscriberLookup, connection: PostgresConnection, logger: Logger) async throws -> String? {
        let rows = try await connection.query(
            """
            SELECT reclaim.iso8601(max(e.erased_at)) FROM reclaim.forgotten_subscribers f JOIN reclaim.erasures e ON e.id = f.erasure_id
            WHERE f.bundle_id IN ('', coalesce(\(lookup.bundleId)::text, ''))
              AND ((f.kind = 'original_transaction_id' AND f.sha256 = reclaim.forgotten_hash('original_transaction_id', \(lookup.originalTransactionId)::text))
                OR (f.kind = 'app_account_token' AND f.sha256 = reclaim.forgotten_hash('app_account_token', \(lookup.appAccountToken)::uuid::text)))
            """,
            logger: logger
        )
        for try await at in rows.decode(String?.self) { return at }
        return nil
    }

    /// Whether the subscriber of `bundleId` with either identifier was forgotten: what they bring is dropped.
    public static func isForgotten(
        bundleId: String,
        originalTransactionId: String?,
        appAccountToken: UUID?,
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> Bool {
        let rows = try await connection.query(
            "SELECT reclaim.is_forgotten(\(bundleId), \(originalTransactionId)::text, \(appAccountToken)::uuid)",
            logger: logger
        )
        for try await forgotten in rows.decode(Bool.self) { return forgotten }
        return false
    }
}
