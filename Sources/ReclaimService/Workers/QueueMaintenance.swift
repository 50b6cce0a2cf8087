import Logging
import Metrics
import ReclaimStore
import ServiceLifecycle

/// Background upkeep of the queue, run by every worker process (all steps are safe to run
/// concurrently from many): rescue jobs whose worker died (every second: a killed worker's jobs are
/// found by its released owner lock, so they come back within about a second), prune old completed
/// jobs (every minute), and publish queue depth and backlog age as gauges (every five seconds), and the offer-code
/// pools' unused codes (every 30 seconds, ``OfferCodeGauges``).
public struct QueueMaintenance: Service {
    public let queue: JobQueue
    public let interval: Duration
    public let completedRetention: Duration
    let logger: Logger

    public init(queue: JobQueue, interval: Duration = .seconds(1), completedRetention: Duration, logger: Logger) {
        self.queue = queue
        self.interval = interval
        self.completedRetention = completedRetention
        self.logger = logger
    }

    public func run() async throws {
        let depth = Dictionary(
            uniqueKeysWithValues: JobState.allCases.map { ($0, Gauge(label: "reclaim_jobs", dimensions: [("state", $0.rawValue)])) }
        )
        let oldestAge = Gauge(label: "reclaim_jobs_oldest_due_age_seconds")
        let oldestRunning = Gauge(label: "reclaim_jobs_oldest_running_age_seconds")
        let rescued = Counter(label: "reclaim_jobs_rescued_total")
        var round = 0
        var pools = Set<[String]>()
        while !Task.isCancelledOrShuttingDown {
            do {
                let count = try await queue.rescueExpired(logger: logger)
                if count > 0 {
                    rescued.increment(by: count)
                    logger.warning("rescued jobs whose worker stopped", metadata: ["jobs": "\(count)"])
                }
                if round % 60 == 0 {
                    let pruned = try await queue.pruneCompleted(olderThan: completedRetention, logger: logger)
                    if pruned > 0 { logger.info("pruned completed jobs", metadata: ["jobs": "\(pruned)"]) }
                }
                if round % 5 == 0 {
                    let stats = try await queue.stats(logger: logger)
                    for state in JobState.allCases { depth[state]?.record(stats.counts[state] ?? 0) }
                    oldestAge.record(stats.oldestDueAgeSeconds)
                    oldestRunning.record(stats.oldestRunningAgeSeconds)
                }
                if round % 30 == 0 { try await OfferCodeGauges.record(postgres: queue.postgres, known: &pools, logger: logger) }
            } catch {
                if !Task.isCancelledOrShuttingDown { logger.warning("queue maintenance failed", metadata: ["error": "\(String(reflecting: error))"]) }
            }
            round += 1
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }
}

extension Task where Success == Never, Failure == Never {
    static var isCancelledOrShuttingDown: Bool { Task.isCancelled || Task.isShuttingDownGracefully }
}
