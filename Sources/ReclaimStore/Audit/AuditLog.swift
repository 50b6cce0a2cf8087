import Crypto
import Foundation
import Logging
import PostgresNIO

/// `reclaim.audit_log`: every privileged action, appended in a hash chain (docs/operations.md, "Audit log").
///
/// Each row's hash is SHA-256 over the previous row's hash and the row's fields, each length-prefixed
/// (``rowHash(previous:entry:)``); rows are appended one at a time under a transaction-scoped advisory lock, so the
/// chain has one order. ``verify(connection:logger:)`` recomputes it: a row edited, deleted or inserted out of turn
/// breaks it at that row. A subscriber is named only by ``pseudonym(subscriber:connection:logger:)``, a keyed hash,
/// so `reclaim subscribers forget` has nothing to redact here and the log never changes.
public enum AuditLog {
    public enum ActorKind: String, Sendable, Codable {
        /// An HTTP request or a console session, by its key.
        case key
        /// A `reclaim` command line, by `--actor`, `RECLAIM_ACTOR` or the operating-system user.
        case command
        /// `reclaim serve` starting.
        case process
    }

    /// Who acted.
    public struct Actor: Sendable, Equatable, Codable {
        public let kind: ActorKind
        public let keyId: UUID?
        public let name: String

        public init(kind: ActorKind, keyId: UUID? = nil, name: String) {
            (self.kind, self.keyId, self.name) = (kind, keyId, String(name.prefix(200)))
        }
    }

    /// One action, before it is appended.
    public struct Entry: Sendable, Equatable {
        public let at: Date
        public let actor: Actor
        public let action: String
        public let target: String?
        public let outcome: String
        public let detail: String?

        public init(at: Date = Date(), actor: Actor, action: String, target: String? = nil, outcome: String = "ok", detail: String? = nil) {
            // Whole milliseconds, the nearest (what timestamptz gives back, as a Double a hair either side of it, rounds
            // to the same one again): what the hash covers.
            self.at = Date(timeIntervalSince1970: (at.timeIntervalSince1970 * 1000).rounded() / 1000)
            (self.actor, self.action, self.target, self.outcome, self.detail) = (
                actor, action, target, outcome, detail.map { String($0.prefix(500)) }
            )
        }
    }

    /// A row as `reclaim audit` shows it.
    public struct Row: Sendable, Equatable, Codable {
        public let id: Int64
        public let at: Date
        public let actorKind: ActorKind
        public let actorKeyId: UUID?
        public let actor: String
        public let action: String
        public let target: String?
        public let outcome: String
        public let detail: String?
        public let hash: String
    }

    public static let genesis = [UInt8](repeating: 0, count: 32)
    /// The advisory lock appends take: one writer at a time extends the chain (any 64-bit key no other lock uses).
    static let lockKey: Int64 = 0x7265_636C_6175_6469  // "reclaudi"

    /// SHA-256 over the previous hash and the row's fields, each length-prefixed (4 bytes, big-endian) after a
    /// version byte, so that no two different rows hash alike by moving text from one field to the next.
    public static func rowHash(previous: [UInt8], entry: Entry) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(data: [1])
        func field(_ text: String?) {
            let bytes = Array((text ?? "\u{0}").utf8)
            withUnsafeBytes(of: UInt32(bytes.count).bigEndian) { hasher.update(bufferPointer: $0) }
            hasher.update(data: bytes)
        }
        hasher.update(data: previous)
        field(String(Int64((entry.at.timeIntervalSince1970 * 1000).rounded())))
        field(entry.actor.kind.rawValue)
        field(entry.actor.keyId?.uuidString.lowercased())
        field(entry.actor.name)
        field(entry.action)
        field(entry.target)
        field(entry.outcome)
        field(entry.detail)
        return Array(hasher.finalize())
    }

    /// Appends one action to the chain, in a transaction of its own.
    @discardableResult
    public static func append(_ entry: Entry, database: Database, logger: Logger) async throws -> Int64 {
        try await database.transaction(logger: logger) { connection in
            try await append(entry, connection: connection, logger: logger)
        }
    }

    /// Appends within the caller's transaction (the lock is held until it ends).
    @discardableResult
    public static func append(_ entry: Entry, connection: PostgresConnection, logger: Logger) async throws -> Int64 {
        try await connection.query("SELECT pg_advisory_xact_lock(\(Self.lockKey))", logger: logger)
        var previous = genesis
        for try await hash in try await connection.query("SELECT hash FROM reclaim.audit_log ORDER BY id DESC LIMIT 1", logger: logger)
            .decode(ByteBuffer.self)
        {
            previous = Array(buffer: hash)
        }
        let hash = rowHash(previous: previous, entry: entry)
        let rows = try await connection.query(
            """
            INSERT INTO reclaim.audit_log (at, actor_kind, actor_key_id, actor, action, target, outcome, detail, previous_hash, hash)
            VALUES (\(entry.at), \(entry.actor.kind.rawValue), \(entry.actor.keyId), \(entry.actor.name), \(entry.action), \(entry.target),
                    \(entry.outcome), \(entry.detail), \(ByteBuffer(bytes: previous)), \(ByteBuffer(bytes: hash)))
            RETURNING id
            """,
            logger: logger
        )
        for try await id in rows.decode(Int64.self) { return id }
        preconditionFailure("INSERT … RETURNING gave no row")
    }

    /// What `reclaim audit` filters by.
    public struct Filter: Sendable {
        public var action: String?
        public var actor: String?
        public var target: String?
        public var since: Date?
        public var until: Date?
        public var limit: Int = 1000

        public init(action: String? = nil, actor: String? = nil, target: String? = nil, since: Date? = nil, until: Date? = nil, limit: Int = 1000) {
            (self.action, self.actor, self.target, self.since, self.until, self.limit) = (action, actor, target, since, until, limit)
        }
    }

    /// The newest rows first that match: `action` exactly or as a prefix ending in `.` (`campaign.`), `actor` as a
    /// substring of the actor or the key id, `target` exactly.
    public static func list(_ filter: Filter, connection: PostgresConnection, logger: Logger) async throws -> [Row] {
        let actionPrefix = filter.action.map { $0.hasSuffix(".") ? $0 + "%" : $0 }
        let actorPattern = filter.actor.map { "%" + $0.replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_") + "%" }
        let rows = try await connection.query(
            """
            SELECT id, at, actor_kind, actor_key_id, actor, action, target, outcome, detail, hash FROM reclaim.audit_log
            WHERE (\(actionPrefix)::text IS NULL OR action LIKE \(actionPrefix))
              AND (\(actorPattern)::text IS NULL OR actor LIKE \(actorPattern) OR actor_key_id::text LIKE \(actorPattern))
              AND (\(filter.target)::text IS NULL OR target = \(filter.target))
              AND (\(filter.since)::timestamptz IS NULL OR at >= \(filter.since))
              AND (\(filter.until)::timestamptz IS NULL OR at < \(filter.until))
            ORDER BY id DESC LIMIT \(filter.limit)
            """,
            logger: logger
        )
        var found: [Row] = []
        for try await (id, at, kind, keyId, actor, action, target, outcome, detail, hash) in rows.decode(
            (Int64, Date, String, UUID?, String, String, String?, String, String?, ByteBuffer).self
        ) {
            found.append(
                Row(
                    id: id,
                    at: at,
                    actorKind: ActorKind(rawValue: kind) ?? .command,
                    actorKeyId: keyId,
                    actor: actor,
                    action: action,
                    target: target,
                    outcome: outcome,
                    detail: detail,
                    hash: Array(buffer: hash).map { String(format: "%02x", $0) }.joined()
                )
            )
        }
        return found
    }

    /// The chain checked from the first row: `firstBroken` is the id of the first row whose stored previous hash is
    /// not the hash of the row before it, or whose hash is not its fields' (nil: intact).
    public struct Verification: Sendable, Equatable {
        public let rows: Int
        public let firstBroken: Int64?
        public let reason: String?
    }

    public static func verify(connection: PostgresConnection, logger: Logger) async throws -> Verification {
        let rows = try await connection.query(
            "SELECT id, at, actor_kind, actor_key_id, actor, action, target, outcome, detail, previous_hash, hash FROM reclaim.audit_log ORDER BY id",
            logger: logger
        )
        var previous = genesis
        var count = 0
        var lastId: Int64 = 0
        for try await (id, at, kind, keyId, actor, action, target, outcome, detail, storedPrevious, storedHash) in rows.decode(
            (Int64, Date, String, UUID?, String, String, String?, String, String?, ByteBuffer, ByteBuffer).self
        ) {
            count += 1
            defer { lastId = id }
            guard Array(buffer: storedPrevious) == previous else {
                let reason =
                    lastId == 0
                    ? "the first row does not start the chain (rows before it were deleted?)"
                    : "it does not follow row \(lastId) (a row between was deleted, or row \(lastId) was changed)"
                return Verification(rows: count, firstBroken: id, reason: reason)
            }
            let entry = Entry(
                at: at,
                actor: Actor(kind: ActorKind(rawValue: kind) ?? .command, keyId: keyId, name: actor),
                action: action,
                target: target,
                outcome: outcome,
                detail: detail
            )
            let expected = rowHash(previous: previous, entry: entry)
            guard Array(buffer: storedHash) == expected, ActorKind(rawValue: kind) != nil else {
                return Verification(rows: count, firstBroken: id, reason: "its fields are not those its hash covers (the row was changed)")
            }
            previous = expected
        }
        return Verification(rows: count, firstBroken: nil, reason: nil)
    }

    /// The pseudonym a subscriber has in the log: `subscriber:` and the first 32 hex digits of HMAC-SHA-256 of the
    /// identifier (an original transaction id, or an appAccountToken in lower case) under the install's secret,
    /// made on first use.
    public static func pseudonym(subscriber identifier: String, connection: PostgresConnection, logger: Logger) async throws -> String {
        let mac = try await keyedHash(identifier.lowercased(), connection: connection, logger: logger)
        return "subscriber:" + mac.prefix(16).map { String(format: "%02x", $0) }.joined()
    }

    /// HMAC-SHA-256 of `text` under the install's secret (made on first use): what names a subscriber where Reclaim
    /// keeps no identifier (the audit log, the erasure requests).
    public static func keyedHash(_ text: String, connection: PostgresConnection, logger: Logger) async throws -> [UInt8] {
        func stored() async throws -> [UInt8]? {
            for try await bytes in try await connection.query("SELECT secret FROM reclaim.audit_pseudonym_key", logger: logger).decode(
                ByteBuffer.self
            ) {
                return Array(buffer: bytes)
            }
            return nil
        }
        // Read; written only the first time (a concurrent first write waits for the other's and reads it).
        var secret = try await stored()
        if secret == nil {
            try await connection.query(
                """
                INSERT INTO reclaim.audit_pseudonym_key (secret) VALUES (\(ByteBuffer(bytes: Self.randomSecret())))
                ON CONFLICT (id) DO NOTHING
                """,
                logger: logger
            )
            secret = try await stored()
        }
        guard let secret else { throw MissingSecret() }
        return Array(HMAC<SHA256>.authenticationCode(for: Array(text.utf8), using: SymmetricKey(data: secret)))
    }

    /// `reclaim.audit_pseudonym_key` was empty right after its row was written (nothing else deletes it).
    struct MissingSecret: Error, CustomStringConvertible {
        var description: String { "reclaim.audit_pseudonym_key holds no secret after writing one" }
    }

    static func randomSecret() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }
}
