import Logging
import PostgresNIO

/// How Reclaim's hot statements (the claim, the ingest insert, the worker's read and write, the launch check) reach
/// PostgreSQL: config `database.preparedStatements`.
///
/// - `named` (the default): each is prepared once per connection under a name and then only bound and executed,
///   which saves PostgreSQL the parse and plan of every run. A pooler that hands a client's statements to whichever
///   server connection is free (PgBouncer before 1.21 in transaction mode, and many managed poolers) breaks this: the
///   statement lands on a connection that never prepared it, and PostgreSQL answers "prepared statement does not
///   exist".
/// - `unnamed`: each run sends its SQL with its values (the unnamed statement: Parse, Bind and Execute in one
///   message group, as every other query of Reclaim already does), which any pooler passes through.
public enum PreparedStatements: String, Sendable, CaseIterable {
    case named, unnamed

    /// The mode of the connection a body runs on: ``Database`` sets it for each body from its own setting, so a
    /// store's function follows the database handle it was given without a parameter of its own.
    @TaskLocal public static var current: PreparedStatements = .named
}

extension PostgresConnection {
    /// Runs one of Reclaim's prepared statements as ``PreparedStatements/current`` says, and decodes every row.
    public func run<Statement: PostgresPreparedStatement>(_ statement: Statement, logger: Logger) async throws -> [Statement.Row] {
        var rows: [Statement.Row] = []
        switch PreparedStatements.current {
        case .named:
            for try await row in try await execute(statement, logger: logger) { rows.append(row) }
        case .unnamed:
            let query = PostgresQuery(unsafeSQL: Statement.sql, binds: try statement.makeBindings())
            for try await row in try await self.query(query, logger: logger) { rows.append(try statement.decodeRow(row)) }
        }
        return rows
    }
}
