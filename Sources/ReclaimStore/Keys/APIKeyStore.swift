import Crypto
import Foundation
import Logging
import PostgresNIO
import ReclaimDomain

/// App keys (delivery API, bound to one bundle id) and admin keys (admin API).
///
/// A key is 32 random bytes in base64url behind a readable prefix (`rk_app_`, `rk_admin_`).
/// Only its SHA-256 is stored, so a database dump reveals no usable key; the key is shown once.
public enum APIKeyStore {
    public enum Scope: String, Sendable {
        case app
        case admin
        /// The read-only ops page (/console), of one app or, without a bundle id, every app.
        case console
        /// Support: /console's reports and one subscriber's story (in the console and over HTTP); nothing else.
        case support
        /// Privacy: one subscriber's story and its erasure (data-subject requests); nothing else.
        case privacy

        /// May read one subscriber's story (their personal data).
        public var readsSubscribers: Bool { self == .admin || self == .support || self == .privacy }
        /// May sign in to /console.
        public var opensConsole: Bool { self != .app }
    }

    /// Who a presented key belongs to.
    public struct Caller: Sendable, Equatable {
        public let keyId: UUID
        public let scope: Scope
        public let bundleId: String?
        /// What the key was named at creation (nil for a key made before names, or without one): the audit log's actor.
        public var name: String? = nil

        public init(keyId: UUID, scope: Scope, bundleId: String?, name: String? = nil) {
            (self.keyId, self.scope, self.bundleId, self.name) = (keyId, scope, bundleId, name)
        }
    }

    /// Creates a key and returns it; this is the only time the key exists in clear.
    public static func create(
        scope: Scope,
        bundleId: String?,
        name: String? = nil,
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> String {
        try await createKey(scope: scope, bundleId: bundleId, name: name, connection: connection, logger: logger).key
    }

    /// Creates a key: its id (for the audit log) and the key, in clear only here.
    public static func createKey(
        scope: Scope,
        bundleId: String?,
        name: String? = nil,
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> (id: UUID, key: String) {
        var generator = SystemRandomNumberGenerator()
        let secret = Base64URL.encode((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
        let key = "rk_\(scope.rawValue)_\(secret)"
        let id = UUID()
        let hash = Self.hash(key)
        let prefix = String(key.prefix("rk_\(scope.rawValue)_".count + 5))
        try await connection.query(
            """
            INSERT INTO reclaim.api_keys (id, scope, bundle_id, key_hash, key_prefix, name)
            VALUES (\(id), \(scope.rawValue), \(bundleId), \(hash), \(prefix), \(name))
            """,
            logger: logger
        )
        return (id, key)
    }

    /// Every key (app keys of one app when `bundleId` is given), newest first.
    public static func list(bundleId: String?, connection: PostgresConnection, logger: Logger) async throws -> [APIKeyRecord] {
        let rows = try await connection.query(
            """
            SELECT id, scope, bundle_id, key_prefix, name, created_at, revoked_at FROM reclaim.api_keys
            WHERE \(bundleId)::text IS NULL OR bundle_id = \(bundleId)
            ORDER BY created_at DESC
            """,
            logger: logger
        )
        var keys: [APIKeyRecord] = []
        for try await (id, scope, bundle, prefix, name, created, revoked) in rows.decode((UUID, String, String?, String, String?, Date, Date?).self) {
            guard let scope = Scope(rawValue: scope) else { continue }
            keys.append(APIKeyRecord(id: id, scope: scope, bundleId: bundle, prefix: prefix, name: name, createdAt: created, revokedAt: revoked))
        }
        return keys
    }

    /// Revokes the key with this id; false when there is none, or it was revoked already.
    public static func revoke(id: UUID, connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let rows = try await connection.query(
            "UPDATE reclaim.api_keys SET revoked_at = now() WHERE id = \(id) AND revoked_at IS NULL RETURNING 1",
            logger: logger
        )
        for try await _ in rows { return true }
        return false
    }

    /// The caller a key belongs to, or nil for an unknown or revoked key.
    ///
    /// The lookup compares SHA-256 digests inside PostgreSQL's index, never the key itself, so its timing tells
    /// an attacker nothing about a key: learning that a digest prefix matches would need preimages of SHA-256.
    public static func authenticate(_ key: String, connection: PostgresConnection, logger: Logger) async throws -> Caller? {
        let hash = Self.hash(key)
        let rows = try await connection.query(
            "SELECT id, scope, bundle_id, name FROM reclaim.api_keys WHERE key_hash = \(hash) AND revoked_at IS NULL",
            logger: logger
        )
        for try await (id, scope, bundleId, name) in rows.decode((UUID, String, String?, String?).self) {
            guard let scope = Scope(rawValue: scope) else { return nil }
            return Caller(keyId: id, scope: scope, bundleId: bundleId, name: name)
        }
        return nil
    }

    /// The caller of an active key by id, and the key's SHA-256: console sessions are signed with it, so a
    /// session ends when its key is revoked, and every process can check a session without shared state.
    /// `sessionsNotBefore`: sessions signed in before it were signed out (``endConsoleSessions(keyId:signedInUntil:logger:)``).
    public static func sessionSecret(
        keyId: UUID,
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> (caller: Caller, secret: [UInt8], sessionsNotBefore: Date?)? {
        let rows = try await connection.query(
            "SELECT scope, bundle_id, key_hash, console_sessions_not_before, name FROM reclaim.api_keys WHERE id = \(keyId) AND revoked_at IS NULL",
            logger: logger
        )
        for try await (scope, bundleId, hash, notBefore, name) in rows.decode((String, String?, ByteBuffer, Date?, String?).self) {
            guard let scope = Scope(rawValue: scope) else { return nil }
            return (Caller(keyId: keyId, scope: scope, bundleId: bundleId, name: name), Array(buffer: hash), notBefore)
        }
        return nil
    }

    /// Sign-out: ends every console session of the key signed in at or before `signedInUntil` (the session that
    /// signs out, and any older copy of it); sessions signed in later stay. Never moves the limit back.
    public static func endConsoleSessions(keyId: UUID, signedInUntil: Date, connection: PostgresConnection, logger: Logger) async throws {
        let notBefore = signedInUntil.addingTimeInterval(1)
        try await connection.query(
            """
            UPDATE reclaim.api_keys
            SET console_sessions_not_before = greatest(console_sessions_not_before, \(notBefore))
            WHERE id = \(keyId)
            """,
            logger: logger
        )
    }

    static func hash(_ key: String) -> ByteBuffer {
        ByteBuffer(bytes: SHA256.hash(data: Data(key.utf8)))
    }
}
