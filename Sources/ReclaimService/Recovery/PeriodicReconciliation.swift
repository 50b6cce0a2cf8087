import AsyncHTTPClient
import Foundation
import Logging
import PostgresNIO
import ReclaimStore
import ServiceLifecycle

/// The worker role's reconciliation: every `reconciliation.interval`, the last `reconciliation.lookBack` of
/// every app with `serverAPI`. One process at a time runs it, under a session advisory lock (released when
/// its connection closes, so a killed worker never holds it); a worker that starts right after another ran
/// waits for the interval, because the last run's start is read from `reclaim.reconciliation_runs`.
struct PeriodicReconciliation: Service {
    static let advisoryLockKey: Int64 = 0x72_65_63_6F_6E_63_69_6C
    let dependencies: Dependencies
    let interval: Duration
    let lookBack: TimeInterval
    /// How often a worker checks whether a run is due.
    var checkEvery: Duration = .seconds(60)

    func run() async throws {
        let targets = (try? Reconciler.targets(dependencies.config, app: nil, environment: nil)) ?? []
        guard interval > .zero, !targets.isEmpty else {
            // Nothing to reconcile. A service that returns early stops its whole ServiceGroup: wait for shutdown.
            try? await gracefulShutdown()
            return
        }
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        while !Task.isCancelledOrShuttingDown {
            do {
                try await runIfDue(targets, http: http)
            } catch {
                if !Task.isCancelledOrShuttingDown {
                    dependencies.logger.warning("periodic reconciliation failed", metadata: ["error": "\(error)"])
                }
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: min(checkEvery, interval)) }
        }
        try? await http.shutdown()
    }

    func runIfDue(_ targets: [(ReclaimConfig.App, String)], http: HTTPClient) async throws {
        let logger = dependencies.logger
        // The session holds the advisory lock for the whole run (App Store Server API calls included), so its
        // deadline is the run's: a run longer than the interval between runs is stuck.
        try await dependencies.postgres.withConnection(deadline: interval, logger: logger) { connection in
            let locked = try await connection.query("SELECT pg_try_advisory_lock(\(Self.advisoryLockKey))", logger: logger)
            var holds = false
            for try await value in locked.decode(Bool.self) { holds = value }
            guard holds else { return }
            do {
                if try await ReconciliationRunStore.isDue(startedBy: "worker", interval: interval, connection: connection, logger: logger) {
                    try await reconcile(targets, http: http)
                }
            } catch {
                _ = try? await connection.query("SELECT pg_advisory_unlock(\(Self.advisoryLockKey))", logger: logger)
                throw error
            }
            _ = try await connection.query("SELECT pg_advisory_unlock(\(Self.advisoryLockKey))", logger: logger)
        }
    }

    private func reconcile(_ targets: [(ReclaimConfig.App, String)], http: HTTPClient) async throws {
        let reconciler = Reconciler(dependencies: dependencies)
        let now = Date()
        for (app, environment) in targets {
            do {
                let client = try AppStoreServerAPIClient(
                    app: app,
                    environment: environment,
                    http: http,
                    pacer: dependencies.applePacer,
                    logger: dependencies.logger
                )
                _ = try await reconciler.reconcile(client, since: now.addingTimeInterval(-lookBack), until: now, startedBy: "worker")
            } catch {
                // One app's failure (a revoked key, Apple down) must not keep the others from reconciling.
                dependencies.logger.warning(
                    "reconciliation failed",
                    metadata: ["app": "\(app.bundleId)", "environment": "\(environment)", "error": "\(error)"]
                )
            }
        }
    }
}
