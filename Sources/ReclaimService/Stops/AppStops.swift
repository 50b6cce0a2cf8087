import Foundation
import Logging
import Metrics
import ReclaimStore
import ServiceLifecycle
import Synchronization

/// The stops in force (``AppStopStore``), as this process knows them: read from the database at most a second ago,
/// so a `reclaim stop` takes effect on every process within a second (``AppStopWatcher`` keeps it fresh; a read
/// older than that reads again first). A database that does not answer leaves the last known stops in force.
final class AppStops: Sendable {
    static let freshFor: Duration = .seconds(1)

    let postgres: Database
    private let state = Mutex<(readAt: ContinuousClock.Instant?, stops: [String: AppStopStore.Stop])>((nil, [:]))
    /// 1 while the app is stopped, by bundle id: the metric the ReclaimAppStopped alert watches.
    private let apps: [String]

    init(postgres: Database, apps: [String]) {
        self.postgres = postgres
        self.apps = apps
    }

    /// The stop of `bundleId` in force, or nil.
    func stop(of bundleId: String, logger: Logger) async -> AppStopStore.Stop? {
        await current(logger: logger)[bundleId]
    }

    /// Every stop in force.
    func current(logger: Logger) async -> [String: AppStopStore.Stop] {
        let (readAt, stops) = state.withLock { ($0.readAt, $0.stops) }
        if let readAt, ContinuousClock.now - readAt < Self.freshFor { return stops }
        return await refresh(logger: logger)
    }

    /// Reads the stops again.
    @discardableResult
    func refresh(logger: Logger) async -> [String: AppStopStore.Stop] {
        do {
            let active = try await postgres.withConnection(logger: logger) { try await AppStopStore.active(connection: $0, logger: logger) }
            let stops = Dictionary(active.map { ($0.bundleId, $0) }, uniquingKeysWith: { first, _ in first })
            state.withLock { $0 = (ContinuousClock.now, stops) }
            for app in Set(apps).union(stops.keys) {
                Gauge(label: "reclaim_app_stopped", dimensions: [("bundle_id", app)]).record(stops[app] == nil ? 0 : 1)
            }
            return stops
        } catch {
            logger.warning("the app stops could not be read: the last known stay in force", metadata: ["error": "\(String(reflecting: error))"])
            return state.withLock { $0.stops }
        }
    }

    /// Something a stop held back, counted by kind (`offers`, `offer_codes`, `cancel_sheet`, `grant`, `refund_answer`).
    static func held(_ what: String, bundleId: String) {
        Counter(label: "reclaim_app_stop_held_total", dimensions: [("bundle_id", bundleId), ("what", what)]).increment()
    }
}

/// Reads the stops twice per ``AppStops/freshFor``, so that requests always find them in memory, never older than
/// that (a request that found them stale would read them itself, and under load many would at once), and the gauge
/// stays current on a process that serves nothing of a stopped app.
struct AppStopWatcher: Service {
    let stops: AppStops
    let logger: Logger

    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            await stops.refresh(logger: logger)
            try? await Task.sleep(for: AppStops.freshFor / 2)
        }
    }
}
