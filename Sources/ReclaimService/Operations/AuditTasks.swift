import Foundation
import Logging
import ReclaimStore

/// `reclaim audit`: reading and checking the audit log (``AuditLog``).
public enum AuditTasks {
    /// The rows matching `filter`, newest first, as lines or JSON. A `--target` that is an original transaction id
    /// (digits) or an appAccountToken (a UUID) is looked up by the subscriber's pseudonym; any other
    /// (`campaign:winback`, `key:<id>`, `subscriber:<hex>`) as it is.
    public static func list(_ filter: AuditLog.Filter, json: Bool, url: DatabaseURL, logger: Logger) async throws -> String {
        let rows = try await Database.withDatabase(url, maxConnections: 1, logger: logger) { database in
            try await database.withConnection(logger: logger) { connection in
                var filter = filter
                if let given = filter.target, isSubscriberIdentifier(given) {
                    filter.target = try await AuditLog.pseudonym(subscriber: given, connection: connection, logger: logger)
                }
                return try await AuditLog.list(filter, connection: connection, logger: logger)
            }
        }
        if json { return try ReportJSON.render(rows) }
        guard !rows.isEmpty else { return "no audit entries match" }
        return rows.map { row in
            let key = row.actorKeyId.map { " [key \($0.uuidString.lowercased())]" } ?? ""
            return "\(row.id)\t\(row.at.formatted(.iso8601))\t\(row.actor)\(key)\t\(row.action)\t\(row.target ?? "-")\t\(row.outcome)"
                + (row.detail.map { "\t\($0)" } ?? "")
        }.joined(separator: "\n")
    }

    /// An original transaction id or an appAccountToken: what `--target` pseudonymises.
    static func isSubscriberIdentifier(_ text: String) -> Bool {
        SubscriberLookup.Identifier(parsing: text) != nil
    }

    /// The chain checked from its first row.
    public static func verify(url: DatabaseURL, logger: Logger) async throws -> AuditLog.Verification {
        try await Database.withDatabase(url, maxConnections: 1, logger: logger) { database in
            try await database.withConnection(logger: logger) { try await AuditLog.verify(connection: $0, logger: logger) }
        }
    }
}
