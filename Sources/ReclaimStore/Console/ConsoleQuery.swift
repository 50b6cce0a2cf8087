import Foundation

/// One query of the /console page: what it reads and its SQL exactly as run, so the page can show a
/// dashboard author where each number comes from.
public struct ConsoleQuery: Sendable, Equatable {
    /// Anchor on the page, e.g. `sql-campaigns`.
    public let id: String
    /// The view (or table) it reads, e.g. `reclaim.campaign_funnel`.
    public let source: String
    /// The SQL with `$1` for the app when the page is limited to one app, and `$2` for the environment of its
    /// business numbers (Production unless asked otherwise).
    public let sql: String
    /// Shown to global keys only: what it reads names no app Reclaim could trust (refused inputs).
    public var globalOnly = false

    /// The SQL as a person would paste it into psql: `$1` replaced by the app's quoted bundle id, or NULL for
    /// every app, and `$2` by the quoted environment.
    public func runnable(bundleId: String?, environment: String) -> String {
        func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }
        return sql.replacingOccurrences(of: "$1", with: bundleId.map(quoted) ?? "NULL").replacingOccurrences(of: "$2", with: quoted(environment))
    }
}
