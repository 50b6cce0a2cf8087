import Foundation
import Logging
import ReclaimStore

/// `reclaim stop`: one stop for a whole app, and its resume (docs/operations.md, "Stopping an app").
public enum StopTasks {
    /// Stops `bundleId` (checked against the config when one is named); the line to print.
    public static func stop(
        bundleId: String,
        reason: String,
        config: ReclaimConfig?,
        actor: String?,
        url: DatabaseURL,
        logger: Logger
    ) async throws
        -> String
    {
        if let config, !config.apps.contains(where: { $0.bundleId == bundleId }) {
            throw ConfigError("app \(bundleId) is not configured under apps")
        }
        let reason = reason.trimmingCharacters(in: .whitespacesAndNewlines)
        // The column's limit counts code points (char_length), not what Swift counts as characters.
        guard (1...500).contains(reason.unicodeScalars.count) else { throw ConfigError("--reason must say why, in 1 to 500 characters") }
        let who = Audit.commandActor(actor)
        let (stop, new) = try await Database.withDatabase(url, maxConnections: 1, logger: logger) { database in
            try await database.transaction(logger: logger) { connection in
                let result = try await AppStopStore.stop(bundleId: bundleId, reason: reason, by: who.name, connection: connection, logger: logger)
                try await AuditLog.append(
                    AuditLog.Entry(
                        actor: who,
                        action: "app.stop",
                        target: "app:\(bundleId)",
                        outcome: result.new ? "ok" : "unchanged",
                        detail: reason
                    ),
                    connection: connection,
                    logger: logger
                )
                return result
            }
        }
        guard new else {
            return "\(bundleId) was already stopped since \(stop.stoppedAt.formatted(.iso8601)) by \(stop.stoppedBy): \(stop.reason)"
        }
        return "stopped \(bundleId): within a second every process hands out no offer or code for it, answers its cancel sheet {}, "
            + "refuses its grants and holds its refund answers (sent after the resume while Apple's 12 hours last); campaigns go on "
            + "deciding (reclaim campaigns pause to stop them too). Undo: reclaim stop --app \(bundleId) --resume"
    }

    /// Resumes `bundleId`; the line to print.
    public static func resume(bundleId: String, actor: String?, url: DatabaseURL, logger: Logger) async throws -> String {
        let who = Audit.commandActor(actor)
        let ended = try await Database.withDatabase(url, maxConnections: 1, logger: logger) { database in
            try await database.transaction(logger: logger) { connection in
                let ended = try await AppStopStore.resume(bundleId: bundleId, by: who.name, connection: connection, logger: logger)
                try await AuditLog.append(
                    AuditLog.Entry(actor: who, action: "app.resume", target: "app:\(bundleId)", outcome: ended == nil ? "unchanged" : "ok"),
                    connection: connection,
                    logger: logger
                )
                return ended
            }
        }
        guard let ended else { return "\(bundleId) was not stopped" }
        return "resumed \(bundleId), stopped since \(ended.stoppedAt.formatted(.iso8601)): held refund answers go out now; "
            + "\(ended.cancelSheetAnsweredEmpty) cancel-sheet request\(ended.cancelSheetAnsweredEmpty == 1 ? " was" : "s were") answered {} during the stop"
    }

    /// The stops in force, one line each.
    public static func list(url: DatabaseURL, logger: Logger) async throws -> String {
        let stops = try await Database.withDatabase(url, maxConnections: 1, logger: logger) { database in
            try await database.withConnection(logger: logger) { try await AppStopStore.active(connection: $0, logger: logger) }
        }
        guard !stops.isEmpty else { return "no app is stopped" }
        return stops.map { "\($0.bundleId)\tstopped since \($0.stoppedAt.formatted(.iso8601)) by \($0.stoppedBy)\t\($0.reason)" }.joined(
            separator: "\n"
        )
    }
}
