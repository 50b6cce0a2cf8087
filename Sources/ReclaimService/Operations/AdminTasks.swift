import Foundation
import Logging
import PostgresNIO
import ReclaimStore

/// What the operator commands (`reclaim apps`, `reclaim admin`, `reclaim jobs`) do, so the
/// executable only parses arguments.
public enum AdminTasks {
    /// Creates an app key bound to `bundleId`, after checking the app is configured.
    public static func createAppKey(
        bundleId: String,
        name: String? = nil,
        config: ReclaimConfig?,
        actor: String? = nil,
        url: DatabaseURL,
        logger: Logger
    ) async throws
        -> String
    {
        if let config, !config.apps.contains(where: { $0.bundleId == bundleId }) {
            throw ConfigError("app \(bundleId) is not configured under apps; keys are only made for configured apps")
        }
        return try await createKey(scope: .app, bundleId: bundleId, name: name, actor: actor, url: url, logger: logger)
    }

    /// Creates a key of any role and records it in the audit log (`key.create`, the key's id, its role and app).
    static func createKey(
        scope: APIKeyStore.Scope,
        bundleId: String?,
        name: String?,
        actor: String?,
        url: DatabaseURL,
        logger: Logger
    ) async throws
        -> String
    {
        let who = Audit.commandActor(actor)
        // Every key has a name: what the operator gave, else who made it and when.
        let named = name ?? "\(scope.rawValue) by \(who.name) \(Date().formatted(.iso8601.year().month().day()))"
        return try await Database.withDatabase(url, maxConnections: 1, logger: logger) { database in
            try await database.transaction(logger: logger) { connection in
                let (id, key) = try await APIKeyStore.createKey(scope: scope, bundleId: bundleId, name: named, connection: connection, logger: logger)
                try await AuditLog.append(
                    AuditLog.Entry(
                        actor: who,
                        action: "key.create",
                        target: "key:\(id.uuidString.lowercased())",
                        detail: "\(scope.rawValue) key \(named.debugDescription) for \(bundleId ?? "every app")"
                    ),
                    connection: connection,
                    logger: logger
                )
                return key
            }
        }
    }

    /// App and console keys (of one app, or all) as printable lines: id, app, prefix, name, created, revoked. Never the key.
    public static func listAppKeys(bundleId: String?, url: DatabaseURL, logger: Logger) async throws -> [String] {
        try await Database.withDatabase(url, maxConnections: 1, logger: logger) { client in
            try await client.withConnection(logger: logger) { try await APIKeyStore.list(bundleId: bundleId, connection: $0, logger: logger) }.filter
            { $0.scope != .admin }.map { key in
                let revoked = key.revokedAt.map { "revoked \($0.formatted(.iso8601))" } ?? "active"
                return
                    "\(key.id.uuidString.lowercased())\t\(key.bundleId ?? "")\t\(key.prefix)…\t\(key.name ?? "-")\tcreated \(key.createdAt.formatted(.iso8601))\t\(revoked)"
            }
        }
    }

    /// Admin and console keys as printable lines: id, scope, app (or every app), prefix, name, created, revoked.
    /// Never the key.
    public static func listAdminKeys(url: DatabaseURL, logger: Logger) async throws -> [String] {
        try await Database.withDatabase(url, maxConnections: 1, logger: logger) { client in
            try await client.withConnection(logger: logger) { try await APIKeyStore.list(bundleId: nil, connection: $0, logger: logger) }.filter {
                $0.scope != .app
            }.map { key in
                let revoked = key.revokedAt.map { "revoked \($0.formatted(.iso8601))" } ?? "active"
                return
                    "\(key.id.uuidString.lowercased())\t\(key.scope.rawValue)\t\(key.bundleId ?? "every app")\t\(key.prefix)…\t\(key.name ?? "-")\tcreated \(key.createdAt.formatted(.iso8601))\t\(revoked)"
            }
        }
    }

    /// Why a key was not revoked.
    public enum RevokeRefusal: Error, CustomStringConvertible {
        case noActiveKey(UUID)
        case adminKey(UUID)

        public var description: String {
            switch self {
            case .noActiveKey(let id): "no active key with id \(id.uuidString.lowercased())"
            case .adminKey(let id):
                "\(id.uuidString.lowercased()) is an admin key: revoking it ends the admin API and /console for whoever uses it; add --admin if you mean it"
            }
        }
    }

    /// Revokes a key by id. An admin key only when `allowAdmin`: its id sits in the same lists as app keys, and
    /// revoking the operator's own key by a slip locks them out.
    public static func revokeKey(id: UUID, allowAdmin: Bool = false, actor: String? = nil, url: DatabaseURL, logger: Logger) async throws {
        try await Audit.recording("key.revoke", target: .text("key:\(id.uuidString.lowercased())"), actor: actor, url: url, logger: logger) {
            try await Database.withDatabase(url, maxConnections: 1, logger: logger) { client in
                try await client.withConnection(logger: logger) { connection in
                    let key = try await APIKeyStore.list(bundleId: nil, connection: connection, logger: logger).first { $0.id == id }
                    guard let key, key.revokedAt == nil else { throw RevokeRefusal.noActiveKey(id) }
                    if key.scope == .admin && !allowAdmin { throw RevokeRefusal.adminKey(id) }
                    guard try await APIKeyStore.revoke(id: id, connection: connection, logger: logger) else { throw RevokeRefusal.noActiveKey(id) }
                }
            }
        }
    }

    /// A read-only /console key, of one app (checked against the config when given) or of every app.
    public static func createConsoleKey(
        bundleId: String?,
        name: String?,
        config: ReclaimConfig?,
        actor: String? = nil,
        url: DatabaseURL,
        logger: Logger
    ) async throws
        -> String
    {
        if let bundleId, let config, !config.apps.contains(where: { $0.bundleId == bundleId }) {
            throw ConfigError("app \(bundleId) is not configured under apps; keys are only made for configured apps")
        }
        return try await createKey(scope: .console, bundleId: bundleId, name: name, actor: actor, url: url, logger: logger)
    }

    /// The roles `reclaim admin create-key --role` makes.
    public enum Role: String, CaseIterable, Sendable {
        /// Everything: the admin API (grants), every console page, every app.
        case admin
        /// One subscriber's story and the reports, in the console; nothing else.
        case support
        /// One subscriber's story and its erasure: data-subject requests.
        case privacy

        var scope: APIKeyStore.Scope {
            switch self {
            case .admin: .admin
            case .support: .support
            case .privacy: .privacy
            }
        }
    }

    /// An admin, support or privacy key; support and privacy keys of one app when `bundleId` is given (checked
    /// against the config when one is named), else of every app. An admin key is always of every app.
    public static func createAdminKey(
        role: Role = .admin,
        bundleId: String? = nil,
        name: String? = nil,
        config: ReclaimConfig? = nil,
        actor: String? = nil,
        url: DatabaseURL,
        logger: Logger
    ) async throws -> String {
        if role == .admin, bundleId != nil {
            throw ConfigError("an admin key is of every app; for one app, make a support or privacy key (--role)")
        }
        if let bundleId, let config, !config.apps.contains(where: { $0.bundleId == bundleId }) {
            throw ConfigError("app \(bundleId) is not configured under apps; keys are only made for configured apps")
        }
        return try await createKey(scope: role.scope, bundleId: bundleId, name: name, actor: actor, url: url, logger: logger)
    }

    /// Dead jobs as printable lines.
    public static func deadJobs(url: DatabaseURL, logger: Logger) async throws -> [String] {
        try await Database.withDatabase(url, maxConnections: 1, logger: logger) { client in
            try await JobQueue(postgres: client).deadJobs(limit: 1000, logger: logger).map { job in
                let error = (job.lastError ?? "").replacingOccurrences(of: "\n", with: " ")
                // A target's URL may carry a token: only its origin and path are shown (OutboundURL.redacted).
                let target = job.target.map { "\ttarget=\(OutboundURL.redactedTargetId($0))" } ?? ""
                return
                    "\(job.id)\t\(job.kind)\tattempts=\(job.attempts)\tfailed=\(ISO8601DateFormatter().string(from: job.failedAt))\(target)\t\(error)"
            }
        }
    }

    /// Requeues one dead job or all of them; returns how many.
    public static func retryDeadJobs(id: Int64?, url: DatabaseURL, logger: Logger) async throws -> Int {
        try await Database.withDatabase(url, maxConnections: 1, logger: logger) { client in
            try await JobQueue(postgres: client).retryDead(id: id, logger: logger)
        }
    }
}

extension AdminTasks {
    /// `reclaim prune`: the counts per table, deleted or (dry run) to be deleted.
    public static func prune(_ policy: Pruning.Policy, batchSize: Int, dryRun: Bool, url: DatabaseURL, logger: Logger) async throws -> Pruning.Counts
    {
        try await Database.withDatabase(url, maxConnections: 1, logger: logger) { client in
            try await Pruning.run(policy, batchSize: batchSize, dryRun: dryRun, postgres: client, logger: logger)
        }
    }
}
