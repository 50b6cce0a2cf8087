import Crypto
import Foundation
import Logging
import ReclaimStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Recording privileged actions in `reclaim.audit_log` (``AuditLog``), from the command line and the server.
public enum Audit {
    /// What an action was done to: text as it is (`campaign:winback`, `key:<id>`), or a subscriber, written only as
    /// its pseudonym (``AuditLog/pseudonym(subscriber:connection:logger:)``).
    public enum Target: Sendable {
        case text(String)
        case subscriber(String)
    }

    /// A command line's actor: `--actor`, else `RECLAIM_ACTOR`, else the operating-system user (`os:NAME (uid N)`;
    /// in the container image always `os:reclaim (uid 10001)`, so give `--actor` or `RECLAIM_ACTOR` there).
    public static func commandActor(_ given: String?, environment: [String: String] = ProcessInfo.processInfo.environment) -> AuditLog.Actor {
        if let given = given?.trimmingCharacters(in: .whitespaces), !given.isEmpty { return AuditLog.Actor(kind: .command, name: given) }
        if let named = environment["RECLAIM_ACTOR"]?.trimmingCharacters(in: .whitespaces), !named.isEmpty {
            return AuditLog.Actor(kind: .command, name: named)
        }
        let uid = geteuid()
        let user = getpwuid(uid).flatMap { $0.pointee.pw_name.map { String(cString: $0) } } ?? "?"
        return AuditLog.Actor(kind: .command, name: "os:\(user) (uid \(uid))")
    }

    /// An HTTP request's or a console session's actor: the key's role and name, and its id.
    public static func keyActor(_ caller: APIKeyStore.Caller) -> AuditLog.Actor {
        AuditLog.Actor(kind: .key, keyId: caller.keyId, name: "\(caller.scope.rawValue):\(caller.name ?? "unnamed")")
    }

    /// Appends one entry with a database of its own (a command line).
    public static func record(
        _ action: String,
        target: Target? = nil,
        outcome: String = "ok",
        detail: String? = nil,
        actor: AuditLog.Actor,
        url: DatabaseURL,
        logger: Logger
    ) async throws {
        try await Database.withDatabase(url, maxConnections: 1, logger: logger) { database in
            try await record(action, target: target, outcome: outcome, detail: detail, actor: actor, database: database, logger: logger)
        }
    }

    /// Appends one entry.
    public static func record(
        _ action: String,
        target: Target? = nil,
        outcome: String = "ok",
        detail: String? = nil,
        actor: AuditLog.Actor,
        database: Database,
        logger: Logger
    ) async throws {
        try await database.transaction(logger: logger) { connection in
            let written: String? =
                switch target {
                case .text(let text): text
                case .subscriber(let identifier): try await AuditLog.pseudonym(subscriber: identifier, connection: connection, logger: logger)
                case nil: nil
                }
            try await AuditLog.append(
                AuditLog.Entry(actor: actor, action: action, target: written, outcome: outcome, detail: detail),
                connection: connection,
                logger: logger
            )
        }
    }

    /// Runs a command line's action and records it: `ok`, or `failed` with the error's first line (then rethrows).
    /// An action that succeeded is never recorded as failed: when its record cannot be written, that error is thrown.
    public static func recording<Result: Sendable>(
        _ action: String,
        target: Target?,
        detail: String? = nil,
        actor: String?,
        url: DatabaseURL,
        logger: Logger,
        _ body: () async throws -> Result
    ) async throws -> Result {
        let who = commandActor(actor)
        let result: Result
        do {
            result = try await body()
        } catch {
            let reason = "\(error)".split(separator: "\n").first.map(String.init) ?? "\(error)"
            try? await record(action, target: target, outcome: "failed", detail: reason, actor: who, url: url, logger: logger)
            throw error
        }
        try await record(action, target: target, detail: detail, actor: who, url: url, logger: logger)
        return result
    }

    /// SHA-256 of a file, in hex (the config a process started with).
    public static func sha256(ofFile path: String) -> String? {
        FileManager.default.contents(atPath: path).map { SHA256.hash(data: $0).map { String(format: "%02x", $0) }.joined() }
    }
}
