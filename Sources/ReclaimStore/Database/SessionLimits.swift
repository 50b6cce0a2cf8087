import Logging
import PostgresNIO

/// Whether the session limits Reclaim sends as startup parameters (``DatabaseURL/sessionLimits(_:)``) reached
/// PostgreSQL. A pooler in between may drop them: PgBouncer refuses a connection that sends a parameter it does not
/// know unless `ignore_startup_parameters` lists it, and then passes it on to no server. Without them a transaction
/// whose client vanished keeps its row locks, so `reclaim serve` says so at start, with the settings to give the role.
public enum SessionLimits {
    /// The limits this session lacks, as `name = 'value'` for `ALTER ROLE … SET`; empty when all arrived.
    public static func missing(on database: Database, deadlines: Database.Deadlines, logger: Logger) async throws -> [String] {
        let expected = DatabaseURL.sessionLimits(deadlines)
        let rows = try await database.query(
            "SELECT name, setting FROM pg_settings WHERE name IN ('idle_in_transaction_session_timeout', 'statement_timeout', 'client_connection_check_interval')",
            logger: logger
        )
        var actual: [String: String] = [:]
        for try await (name, setting) in rows.decode((String, String).self) { actual[name] = setting }
        return expected.filter { actual[$0.0] != $0.1 }.map { "\($0.0) = '\($0.1)ms'" }
    }

    /// Logs a warning naming the missing limits and the statement that sets them for the role; nothing when all
    /// arrived or the check itself failed (the database may not be up yet: this is advice, not a gate).
    public static func warnIfMissing(on database: Database, username: String, deadlines: Database.Deadlines, logger: Logger) async {
        guard let missing = try? await missing(on: database, deadlines: deadlines, logger: logger), !missing.isEmpty else { return }
        logger.warning(
            "the database session lacks Reclaim's limits: a pooler between them drops startup parameters; set them for the role",
            metadata: [
                "missing": "\(missing.joined(separator: ", "))",
                "fix": "\(missing.map { "ALTER ROLE \(username) SET \($0);" }.joined(separator: " "))",
            ]
        )
    }
}
