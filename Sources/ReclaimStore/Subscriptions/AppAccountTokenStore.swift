import Foundation
import Logging
import PostgresNIO
import ReclaimDomain

/// A Set App Account Token call, as decided and as Apple answered it (`reclaim.app_account_token_updates`).
public struct AppAccountTokenUpdate: Sendable, Equatable {
    public var id: UUID
    public var subscriber: SubscriberKey
    public var token: UUID
    public var replaces: UUID?
    public var source: AppAccountTokenRepair.Source
    /// pending, set or refused.
    public var status: String
    public var createdAt: Date
    public var settledAt: Date?
    public var appleError: String?

    public init(subscriber: SubscriberKey, token: UUID, replaces: UUID?, source: AppAccountTokenRepair.Source) {
        self.id = UUID()
        self.subscriber = subscriber
        self.token = token
        self.replaces = replaces
        self.source = source
        self.status = "pending"
        self.createdAt = Date()
    }
}

/// `reclaim.app_account_token_updates`: each subscription and token sent to Apple once, by a call lane.
public enum AppAccountTokenStore {
    /// The job kind of one call (payload `{"update": "<id>"}`).
    public static let jobKind = "app_account_token"

    /// Records these updates with a job each, in the caller's transaction; one already decided for the same
    /// subscription and token is left as it is (once per subscription and token). Returns how many are new.
    @discardableResult
    public static func enqueue(_ updates: [AppAccountTokenUpdate], connection: PostgresConnection, logger: Logger) async throws -> Int {
        guard !updates.isEmpty else { return 0 }
        var created: [String] = []
        for try await id in try await connection.query(
            """
            INSERT INTO reclaim.app_account_token_updates (id, bundle_id, environment, original_transaction_id, app_account_token,
                replaces_token, source)
            SELECT u.id, u.bundle, u.environment, u.otid, u.token, NULLIF(u.replaces, '')::uuid, u.source
            FROM unnest(\(updates.map(\.id))::uuid[], \(updates.map(\.subscriber.bundleId))::text[],
                        \(updates.map(\.subscriber.environment))::text[], \(updates.map(\.subscriber.originalTransactionId))::text[],
                        \(updates.map(\.token))::uuid[], \(updates.map { $0.replaces?.uuidString ?? "" })::text[],
                        \(updates.map(\.source.rawValue))::text[]) AS u(id, bundle, environment, otid, token, replaces, source)
            ON CONFLICT (bundle_id, environment, original_transaction_id, app_account_token) DO NOTHING
            RETURNING id
            """,
            logger: logger
        ).decode(UUID.self) {
            created.append("{\"update\":\"\(id.uuidString.lowercased())\"}")
        }
        // As many attempts as an extension's: a key Apple refuses is tried every 10 minutes for a day.
        try await JobQueue.enqueue(kind: jobKind, payloads: created, maxAttempts: 160, connection: connection, logger: logger)
        return created.count
    }

    static let columns = """
        id, bundle_id, environment, original_transaction_id, app_account_token, replaces_token, source, status, created_at,
        settled_at, apple_error
        """

    private static func decode(_ row: PostgresRow) throws -> AppAccountTokenUpdate {
        let r = try row.decode((UUID, String, String, String, UUID, UUID?, String, String, Date, Date?, String?).self)
        var update = AppAccountTokenUpdate(
            subscriber: SubscriberKey(bundleId: r.1, environment: r.2, originalTransactionId: r.3),
            token: r.4,
            replaces: r.5,
            source: AppAccountTokenRepair.Source(rawValue: r.6) ?? .earlierTransaction
        )
        update.id = r.0
        update.status = r.7
        update.createdAt = r.8
        update.settledAt = r.9
        update.appleError = r.10
        return update
    }

    public static func find(_ id: UUID, database: Database, logger: Logger) async throws -> AppAccountTokenUpdate? {
        for row in try await database.query(
            "SELECT \(unescaped: columns) FROM reclaim.app_account_token_updates WHERE id = \(id)",
            logger: logger
        ).rows {
            return try decode(row)
        }
        return nil
    }

    /// One subscription's updates, oldest first (the story).
    public static func updates(of subscriber: SubscriberKey, connection: PostgresConnection, logger: Logger) async throws -> [AppAccountTokenUpdate] {
        var found: [AppAccountTokenUpdate] = []
        for try await row in try await connection.query(
            """
            SELECT \(unescaped: columns) FROM reclaim.app_account_token_updates
            WHERE bundle_id = \(subscriber.bundleId) AND environment = \(subscriber.environment)
              AND original_transaction_id = \(subscriber.originalTransactionId)
            ORDER BY created_at, id
            """,
            logger: logger
        ) {
            found.append(try decode(row))
        }
        return found
    }

    /// Records Apple's answer: `set`, or `refused` with Apple's error.
    public static func settle(
        _ id: UUID,
        status: String,
        appleStatus: Int?,
        appleError: String?,
        connection: PostgresConnection,
        logger: Logger
    ) async throws {
        try await connection.query(
            """
            UPDATE reclaim.app_account_token_updates
            SET status = \(status), settled_at = now(), apple_status = \(appleStatus), apple_error = \(appleError)
            WHERE id = \(id) AND status = 'pending'
            """,
            logger: logger
        )
    }

    /// Stored subscriptions with a token whose newest stored notification's purchase carries none, not yet sent a
    /// call for that token: each with its environment, id, token and that notification's signed payload, for
    /// ``AppAccountTokenRepair`` to judge (`reclaim subscribers set-tokens`).
    public static func backlog(
        of bundleId: String,
        database: Database,
        logger: Logger
    ) async throws -> [(environment: String, originalTransactionId: String, token: UUID, signedPayload: String)] {
        let rows = try await database.query(
            """
            SELECT s.environment, s.original_transaction_id, s.app_account_token, n.signed_payload
            FROM reclaim.subscriptions s
            JOIN LATERAL (
                SELECT signed_payload, app_account_token FROM reclaim.notifications n
                WHERE n.bundle_id = s.bundle_id AND n.environment = s.environment AND n.original_transaction_id = s.original_transaction_id
                  AND n.signed_payload <> ''
                ORDER BY n.signed_date DESC LIMIT 1) n ON true
            WHERE s.bundle_id = \(bundleId) AND s.app_account_token IS NOT NULL AND n.app_account_token IS NULL
              AND NOT EXISTS (
                SELECT 1 FROM reclaim.app_account_token_updates u
                WHERE u.bundle_id = s.bundle_id AND u.environment = s.environment
                  AND u.original_transaction_id = s.original_transaction_id AND u.app_account_token = s.app_account_token)
            """,
            logger: logger
        )
        var found: [(environment: String, originalTransactionId: String, token: UUID, signedPayload: String)] = []
        for try await row in rows.decode((String, String, UUID, String).self) { found.append(row) }
        return found
    }
}
