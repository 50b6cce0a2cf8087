import Logging
import ReclaimStore

/// What /console shows a caller: the dashboard views of every app (admin key, or a console key of no app) or
/// of the console key's app, read in one read-only transaction.
struct ConsoleDashboard: Sendable {
    let postgres: Database

    /// The app `caller` may see; nil for every app.
    static func bundleId(of caller: APIKeyStore.Caller) -> String? {
        caller.scope == .admin ? nil : caller.bundleId
    }

    func report(for caller: APIKeyStore.Caller, logger: Logger) async throws -> ConsoleReport {
        try await postgres.withConnection(deadline: postgres.deadlines.transaction, logger: logger) {
            try await ConsoleReport.load(bundleId: Self.bundleId(of: caller), connection: $0, logger: logger)
        }
    }
}
