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
        url: DatabaseURL,
        logger: Logger
    ) async throws
        -> String
    {
        if let config, !config.apps.contains(where: { $0.bundleId == bundleId }) {
            throw ConfigError("app \(bundleId) is not configured under apps; keys are only made for configured apps")
        }
        return try await Database.withDatabase(url, maxConnections: 1, logger: logger) { client in
            try await client.withConnection(logger: logger) {
                try await APIKeyStore.create(scope: .app, bundleId: bundleId, name: name, connection: $0, logger: logger)
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

    /// Revokes a key by id; false when there is no such active key.
    public static func revokeKey(id: UUID, url: DatabaseURL, logger: Logger) async throws -> Bool {
        try await Database.withDatabase(url, maxConnections: 1, logger: logger) { client in
            try await client.withConnection(logger: logger) { try await APIKeyStore.revoke(id: id, connection: $0, logger: logger) }
        }
    }

    /// A read-only /console key, of one app (checked against the config when given) or of every app.
    public static func createConsoleKey(
        bundleId: String?,
        name: String?,
        config: ReclaimConfig?,
        url: DatabaseURL,
        logger: Logger
    ) async throws
        -> String
    {
        if let bundleId, let config, !config.apps.contains(where: { $0.bundleId == bundleId }) {
            throw ConfigError("app \(bundleId) is not configured under apps; keys are only made for configured apps")
        }
        return try await Database.withDatabase(url, maxConnections: 1, logger: logger) { client in
            try await client.withConnection(logger: logger) {
                try await APIKeyStore.create(scope: .console, bundleId: bundleId, name: name, connection: $0, logger: logger)
            }
        }
    }

    public static func createAdminKey(url: DatabaseURL, logger: Logger) async throws -> String {
        try await Database.withDatabase(url, maxConnections: 1, logger: logger) { client in
            try await client.withConnection(logger: logger) {
                try await APIKeyStore.create(scope: .admin, bundleId: nil, connection: $0, logger: logger)
            }
        }
    }

    /// Dead jobs as printable lines.
    public static func deadJobs(url: DatabaseURL, logger: Logger) async throws -> [String] {
        try await Database.withDatabase(url, maxConnections: 1, logger: logger) { client in
            try await JobQueue(postgres: client).deadJobs(limit: 1000, logger: logger).map { job in
                let error = (job.lastError ?? "").replacingOccurrences(of: "\n", with: " ")
                return "\(job.id)\t\(job.kind)\tattempts=\(job.attempts)\tfailed=\(ISO8601DateFormatter().string(from: job.failedAt))\t\(error)"
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
