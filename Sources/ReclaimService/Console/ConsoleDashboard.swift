import Logging
import ReclaimStore

/// What /console shows a caller: the dashboard views of every app (admin key, or a console key of no app) or
/// of the console key's app, read in one read-only transaction.
struct ConsoleDashboard: Sendable {
    let postgres: Database
    /// The environment whose business numbers the page shows unless asked for the other: Production when any app
    /// accepts it (Sandbox is TestFlight and testers, never charged), else Sandbox (a development set-up).
    let defaultEnvironment: String

    init(postgres: Database, apps: [ReclaimConfig.App]) {
        self.postgres = postgres
        self.defaultEnvironment = apps.contains { $0.environments.contains("Production") } || apps.isEmpty ? "Production" : "Sandbox"
    }

    /// The environments a visitor may switch between.
    static let environments = ["Production", "Sandbox"]

    /// The environment asked for with `?environment=`, or the default.
    func environment(asked: String?) -> String {
        asked.flatMap { Self.environments.contains($0) ? $0 : nil } ?? defaultEnvironment
    }

    /// The app `caller` may see; nil for every app.
    static func bundleId(of caller: APIKeyStore.Caller) -> String? {
        caller.scope == .admin ? nil : caller.bundleId
    }

    func report(for caller: APIKeyStore.Caller, environment: String, logger: Logger) async throws -> ConsoleReport {
        try await postgres.withConnection(deadline: postgres.deadlines.transaction, logger: logger) {
            try await ConsoleReport.load(bundleId: Self.bundleId(of: caller), environment: environment, connection: $0, logger: logger)
        }
    }
}
