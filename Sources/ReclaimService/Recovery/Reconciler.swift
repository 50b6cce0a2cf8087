import AsyncHTTPClient
import Foundation
import Logging
import Metrics
import PostgresNIO
import ReclaimStore

/// Recovers notifications Apple sent while Reclaim was down, misconfigured or unreachable: reads Apple's
/// notification history and feeds every notification through ``NotificationIngest``, the same path as
/// `POST /v1/apple/notifications`. A notification Reclaim has is a duplicate and changes nothing; a missed one
/// is stored and queued, and the workers process it like any other: its campaigns fire once.
public struct Reconciler: Sendable {
    public struct Progress: Sendable {
        public let bundleId: String
        public let environment: String
        public let counts: ReconciliationRunStore.Counts
        public let done: Bool
    }

    public struct Outcome: Sendable {
        public let bundleId: String
        public let environment: String
        public let window: ClosedRange<Date>
        public let counts: ReconciliationRunStore.Counts
        /// Set when the window asked for reached further back than Apple keeps history.
        public let clampedFrom: Date?
    }

    let ingest: NotificationIngest
    let postgres: Database
    let logger: Logger

    public init(dependencies: Dependencies) {
        self.ingest = NotificationIngest(dependencies: dependencies)
        self.postgres = dependencies.postgres
        self.logger = dependencies.logger
    }

    /// Reconciles one app in one environment over `since…until`, recording the run.
    public func reconcile(
        _ client: AppStoreServerAPIClient,
        since: Date,
        until: Date = Date(),
        onlyFailures: Bool = false,
        startedBy: String,
        progress: @Sendable (Progress) -> Void = { _ in }
    ) async throws -> Outcome {
        let earliest = until.addingTimeInterval(-AppStoreAPI.historyLimit(for: client.environment) + 60)
        let start = max(since, earliest)
        let window = start...until
        let id = try await postgres.withConnection(logger: logger) { [logger] in
            try await ReconciliationRunStore.start(
                bundleId: client.bundleId,
                environment: client.environment,
                startedBy: startedBy,
                window: window,
                onlyFailures: onlyFailures,
                connection: $0,
                logger: logger
            )
        }
        var counts = ReconciliationRunStore.Counts()
        let request = AppStoreAPI.NotificationHistoryRequest(
            startDate: Int64(start.timeIntervalSince1970 * 1000),
            endDate: Int64(until.timeIntervalSince1970 * 1000),
            onlyFailures: onlyFailures ? true : nil
        )
        do {
            var token: String?
            repeat {
                let page = try await client.notificationHistory(request, paginationToken: token)
                counts.pages += 1
                for item in page.notificationHistory {
                    counts.found += 1
                    // A refusal is counted and recorded in rejected_inputs by ingest; a database that cannot take
                    // the notification throws: the run stops and a later one retries.
                    switch try await ingest.ingest(signedPayload: item.signedPayload) {
                    case .stored:
                        counts.new += 1
                        // Apple's history had it and Reclaim did not: a notification that never arrived (alert
                        // ReclaimNotificationsMissed).
                        Counter(
                            label: "reclaim_reconciliation_missed_total",
                            dimensions: [("app", client.bundleId), ("environment", client.environment)]
                        ).increment()
                    case .duplicate: break
                    case .refused(let refusal):
                        counts.refused += 1
                        logger.warning(
                            "a notification from Apple's history was refused",
                            metadata: ["problem": "\(refusal.reason.problemType.slug)", "detail": "\(refusal.detail)"]
                        )
                    }
                }
                try await record { [counts] in try await ReconciliationRunStore.progress(id, counts, connection: $0, logger: $1) }
                progress(Progress(bundleId: client.bundleId, environment: client.environment, counts: counts, done: !page.hasMore))
                token = page.hasMore ? page.paginationToken : nil
                if page.hasMore && token == nil {
                    throw AppStoreAPIError(status: 200, errorCode: nil, description: "Get Notification History: hasMore without a paginationToken")
                }
            } while token != nil
        } catch {
            Counter(
                label: "reclaim_reconciliation_runs_total",
                dimensions: [("app", client.bundleId), ("environment", client.environment), ("outcome", "failed")]
            ).increment()
            try? await record { [counts] in try await ReconciliationRunStore.finish(id, counts, error: "\(error)", connection: $0, logger: $1) }
            throw error
        }
        try await record { [counts] in try await ReconciliationRunStore.finish(id, counts, error: nil, connection: $0, logger: $1) }
        Counter(
            label: "reclaim_reconciliation_runs_total",
            dimensions: [("app", client.bundleId), ("environment", client.environment), ("outcome", "completed")]
        ).increment()
        logger.info(
            "reconciled",
            metadata: [
                "app": "\(client.bundleId)", "environment": "\(client.environment)", "found": "\(counts.found)", "new": "\(counts.new)",
                "refused": "\(counts.refused)",
            ]
        )
        return Outcome(
            bundleId: client.bundleId,
            environment: client.environment,
            window: window,
            counts: counts,
            clampedFrom: start > since ? since : nil
        )
    }

    /// Writes to the run's row, on a connection of its own.
    private func record(_ write: @escaping @Sendable (PostgresConnection, Logger) async throws -> Void) async throws {
        try await postgres.withConnection(logger: logger) { [logger] in try await write($0, logger) }
    }

    /// The (app, environment) pairs to reconcile: apps with `serverAPI`, each environment it accepts that the
    /// App Store Server API has (Production, Sandbox), narrowed by `app` and `environment` when given.
    public static func targets(_ config: ReclaimConfig, app: String?, environment: String?) throws -> [(ReclaimConfig.App, String)] {
        if let app, !config.apps.contains(where: { $0.bundleId == app }) {
            throw ConfigError("app \(app) is not configured")
        }
        let apps = config.apps.filter { app == nil || $0.bundleId == app }
        if let app, apps.first?.serverAPI == nil {
            throw ConfigError("app \(app) has no serverAPI (keyId, issuerId, file): reconciliation needs an In-App Purchase key")
        }
        var targets: [(ReclaimConfig.App, String)] = []
        for app in apps where app.serverAPI != nil {
            for env in app.environments where AppStoreAPI.baseURL(for: env) != nil && (environment == nil || env == environment) {
                targets.append((app, env))
            }
        }
        if let environment, targets.isEmpty {
            throw ConfigError("no app with serverAPI accepts \(environment)")
        }
        return targets
    }
}
