import Foundation
import Logging
import PostgresNIO

/// `reclaim.messaging_uploads`: what `reclaim messaging apply` sent Apple, with a hash of each content.
public enum MessagingUploadStore {
    public struct Upload: Sendable, Equatable {
        public let sha256: String
        /// Apple accepted it; false: tried, not known to have landed.
        public let landed: Bool
    }

    /// The app's uploads in one environment, by "kind id" (`message 5f0c…`).
    public static func uploads(bundleId: String, environment: String, database: Database, logger: Logger) async throws -> [String: Upload] {
        let rows = try await database.query(
            "SELECT kind, id, sha256, uploaded_at IS NOT NULL FROM reclaim.messaging_uploads WHERE bundle_id = \(bundleId) AND environment = \(environment)",
            logger: logger
        )
        var found: [String: Upload] = [:]
        for try await (kind, id, sha, landed) in rows.decode((String, String, String, Bool).self) {
            found["\(kind) \(id)"] = Upload(sha256: sha, landed: landed)
        }
        return found
    }

    /// Forgets an attempt that did not land and was not Reclaim's to make (Apple already held the id: uploaded
    /// outside Reclaim), so that a later 409 is not taken for a lost answer of Reclaim's.
    public static func removeAttempt(
        bundleId: String,
        environment: String,
        kind: String,
        id: String,
        database: Database,
        logger: Logger
    ) async throws {
        try await database.query(
            """
            DELETE FROM reclaim.messaging_uploads
            WHERE bundle_id = \(bundleId) AND environment = \(environment) AND kind = \(kind) AND id = \(id) AND uploaded_at IS NULL
            """,
            logger: logger
        )
    }

    /// Records an attempt (before the request: a lost answer leaves its hash behind) or its landing.
    public static func record(
        bundleId: String,
        environment: String,
        kind: String,
        id: String,
        sha256: String,
        landed: Bool,
        database: Database,
        logger: Logger
    ) async throws {
        try await database.query(
            """
            INSERT INTO reclaim.messaging_uploads (bundle_id, environment, kind, id, sha256, uploaded_at)
            VALUES (\(bundleId), \(environment), \(kind), \(id), \(sha256), CASE WHEN \(landed) THEN now() END)
            ON CONFLICT (bundle_id, environment, kind, id) DO UPDATE
            SET sha256 = EXCLUDED.sha256, attempted_at = now(),
                uploaded_at = CASE WHEN \(landed) THEN now() ELSE messaging_uploads.uploaded_at END
            """,
            logger: logger
        )
    }
}
