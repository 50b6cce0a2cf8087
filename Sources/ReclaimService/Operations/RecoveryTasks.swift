import AsyncHTTPClient
import Foundation
import Logging
import PostgresNIO
import Prometheus
import ReclaimDomain
import ReclaimStore

/// What `reclaim reconcile`, `reclaim backfill` and `reclaim apple test-notification` do, so the executable
/// only parses arguments and prints.
public enum RecoveryTasks {
    /// Runs `body` with dependencies on a database and an HTTP client, closing both after.
    static func withDependencies<T: Sendable>(
        config: ReclaimConfig,
        url: DatabaseURL,
        logger: Logger,
        _ body: @Sendable (Dependencies, HTTPClient) async throws -> T
    ) async throws -> T {
        try await Database.withDatabase(url, maxConnections: 8, logger: logger) { postgres in
            let dependencies = try Dependencies(config: config, postgres: postgres, metricsRegistry: PrometheusCollectorRegistry(), logger: logger)
            let http = HTTPClient(eventLoopGroupProvider: .singleton)
            do {
                let result = try await body(dependencies, http)
                try await http.shutdown()
                return result
            } catch {
                try? await http.shutdown()
                throw error
            }
        }
    }

    /// `reclaim reconcile`: every target in turn; stops at the first failure (the runs table keeps the record).
    public static func reconcile(
        config: ReclaimConfig,
        url: DatabaseURL,
        app: String?,
        environment: String?,
        since: TimeInterval,
        onlyFailures: Bool,
        logger: Logger,
        progress: @escaping @Sendable (Reconciler.Progress) -> Void
    ) async throws -> [Reconciler.Outcome] {
        let targets = try Reconciler.targets(config, app: app, environment: environment)
        guard !targets.isEmpty else { throw ConfigError("no app has serverAPI configured: nothing to reconcile") }
        return try await withDependencies(config: config, url: url, logger: logger) { dependencies, http in
            let reconciler = Reconciler(dependencies: dependencies)
            let now = Date()
            var outcomes: [Reconciler.Outcome] = []
            for (app, environment) in targets {
                let client = try AppStoreServerAPIClient(
                    app: app,
                    environment: environment,
                    http: http,
                    pacer: dependencies.applePacer,
                    logger: logger
                )
                outcomes.append(
                    try await reconciler.reconcile(
                        client,
                        since: now.addingTimeInterval(-since),
                        until: now,
                        onlyFailures: onlyFailures,
                        startedBy: "command",
                        progress: progress
                    )
                )
            }
            return outcomes
        }
    }

    /// `reclaim apple test-notification`: asks Apple to send a TEST notification, then polls its status until
    /// Apple reports an attempt (at most `timeout`), and looks the notification up in Reclaim's database. When Apple
    /// delivered it but it is not there yet, waits up to `arrivalWait` for it, saying so: a team that keeps its own
    /// receiver at Apple's URL relays it to Reclaim afterwards (docs/backend-integration.md).
    /// Returns lines to print; throws when Apple refuses the request.
    public static func testNotification(
        config: ReclaimConfig,
        url: DatabaseURL,
        app bundleId: String,
        environment: String?,
        timeout: Duration = .seconds(60),
        poll: Duration = .seconds(2),
        arrivalWait: Duration = .seconds(60),
        logger: Logger,
        report: @escaping @Sendable (String) -> Void
    ) async throws -> Bool {
        guard let app = config.apps.first(where: { $0.bundleId == bundleId }) else { throw ConfigError("app \(bundleId) is not configured") }
        let env = environment ?? (app.environments.contains("Sandbox") ? "Sandbox" : "Production")
        return try await withDependencies(config: config, url: url, logger: logger) { dependencies, http in
            let client = try AppStoreServerAPIClient(app: app, environment: env, http: http, pacer: dependencies.applePacer, logger: logger)
            let token = try await client.requestTestNotification()
            report("requested a test notification from Apple (\(env)); token \(token)")
            let deadline = ContinuousClock.now + timeout
            while true {
                let status = try await client.testNotificationStatus(token: token)
                if let attempts = status.sendAttempts, !attempts.isEmpty {
                    for attempt in attempts {
                        let when = attempt.attemptDate.map { Date(unixMilliseconds: $0).formatted(.iso8601) } ?? "?"
                        report("Apple's attempt at \(when): \(attempt.sendAttemptResult ?? "unknown")")
                    }
                    guard let signed = status.signedPayload else { return false }
                    let notification = try await dependencies.verifier.verifyNotification(signed)
                    let uuid = notification.payload.notificationUUID
                    func stored() async throws -> Bool {
                        guard let id = UUID(uuidString: uuid),
                            let received = try await NotificationStore.receivedAt(of: id, postgres: dependencies.postgres, logger: logger)
                        else { return false }
                        report(reachedLine(notification: uuid, storedAt: received))
                        return true
                    }
                    if try await stored() { return true }
                    let succeeded = attempts.contains { $0.sendAttemptResult == "SUCCESS" }
                    if succeeded {
                        report(
                            "Apple delivered notification \(uuid); waiting up to \(arrivalWait) for it to reach Reclaim (through a relay, it comes after)"
                        )
                        let arrival = ContinuousClock.now + arrivalWait
                        while ContinuousClock.now < arrival {
                            try await Task.sleep(for: poll)
                            if try await stored() { return true }
                        }
                    }
                    report(
                        succeeded
                            ? "notification \(uuid) did not reach this Reclaim's database within \(arrivalWait): check the notification URL in App Store Connect, or that your receiver relays it (docs/backend-integration.md)"
                            : "notification \(uuid) did not reach Reclaim: check that App Store Connect's URL for \(env) is https://<host>/v1/apple/notifications and that the host is reachable from the Internet"
                    )
                    return false
                }
                guard ContinuousClock.now < deadline else {
                    report("Apple reported no attempt within \(timeout); run again later")
                    return false
                }
                try await Task.sleep(for: poll)
            }
        }
    }
}

extension RecoveryTasks {
    /// `reclaim apple test-notification`'s line once the test notification is stored (docs/adopting.md quotes it,
    /// marked `<!-- output: test-notification-reached -->`).
    public static func reachedLine(notification uuid: String, storedAt received: Date) -> String {
        "reached Reclaim: notification \(uuid) stored at \(received.formatted(.iso8601))"
    }
}
