import Foundation
import Logging
import PostgresNIO
import ReclaimService
import ReclaimStore
import ServiceLifecycle
import Synchronization
import UnixSignals

/// `reclaim-bench queue`: no-op jobs drained per second with 1 and 4 worker pools (each with its
/// own connection pool, like separate processes), and enqueue-commit → handler-start latency with
/// idle workers woken by NOTIFY.
///
/// `reclaim-bench queue-worker`: one worker process for the crash test; its handler writes one
/// `public.effects` row per job in the job's transaction. Runs until SIGTERM/SIGINT (or kill -9).
enum QueueBenchmark {
    static var logger: Logger {
        var logger = Logger(label: "bench-queue")
        logger.logLevel = .warning
        return logger
    }

    static func run(_ options: BenchOptions) async throws {
        let server = try DatabaseURL(try options.string("database-url"))
        let jobs = options.int("jobs", default: 50_000)
        let batch = options.int("batch", default: 100)
        let lanes = options.int("lanes", default: 2)
        try await PostgresBench.withMigratedDatabase(on: server, prefix: "bench_queue", logger: logger) { url in
            var figures: [String: Any] = ["jobs": jobs, "batch": batch, "lanes_per_worker": lanes]
            for workers in [1, 4] {
                let rate = try await drainRate(url: url, jobs: jobs, workers: workers, lanes: lanes, batch: batch)
                print("queue: \(workers) worker(s): \(Int(rate)) jobs/s")
                figures["workers_\(workers)_per_s"] = Int(rate)
            }
            for workers in [1, 4] where options.int("samples", default: 500) > 0 {
                let latencies = try await wakeUpLatencies(url: url, workers: workers, samples: options.int("samples", default: 500))
                print("queue: wake-up with \(workers) idle worker(s): p50 \(percentile(latencies, 50)) ms, p99 \(percentile(latencies, 99)) ms")
                let suffix = workers == 4 ? "" : "_\(workers)_worker"
                figures["wake_p50_ms\(suffix)"] = (percentile(latencies, 50) * 1000).rounded() / 1000
                figures["wake_p99_ms\(suffix)"] = (percentile(latencies, 99) * 1000).rounded() / 1000
            }
            printFigures(figures)
        }
    }

    static let noop = ClosureJobHandler { _, _, _ in }

    static func drainRate(url: DatabaseURL, jobs: Int, workers: Int, lanes: Int, batch: Int) async throws -> Double {
        try await Database.withDatabase(url, maxConnections: 2, logger: logger) { client in
            try await client.query("TRUNCATE reclaim.jobs", logger: logger)
            var remaining = jobs
            while remaining > 0 {
                let chunk = min(remaining, 10_000)
                try await client.transaction(logger: logger) { connection in
                    try await JobQueue.enqueue(kind: "noop", payloads: Array(repeating: "{}", count: chunk), connection: connection, logger: logger)
                }
                remaining -= chunk
            }
            try await client.query("VACUUM ANALYZE reclaim.jobs", logger: logger)
            let pools = (0..<workers).map { _ in
                Database(url: url, maxConnections: lanes + 2, deadlines: .server, backgroundLogger: logger)
            }
            let pool = pools.map {
                WorkerPool(
                    queue: JobQueue(postgres: $0),
                    handlers: ["noop": noop],
                    options: .init(concurrency: lanes, batchSize: batch, pollInterval: .seconds(1)),
                    logger: logger
                )
            }
            let started = ContinuousClock.now
            var elapsed = Duration.zero
            try await runServices(pools.map(\.client) + pool) {
                while true {
                    let rows = try await client.query("SELECT count(*)::bigint FROM reclaim.jobs WHERE state = 'completed'", logger: logger)
                    var done: Int64 = 0
                    for try await count in rows.decode(Int64.self) { done = count }
                    if done >= jobs { break }
                    try await Task.sleep(for: .milliseconds(5))
                }
                elapsed = ContinuousClock.now - started
            }
            return Double(jobs) / elapsed.inSeconds
        }
    }

    /// Milliseconds from an enqueue's commit to its handler's start, with idle workers.
    static func wakeUpLatencies(url: DatabaseURL, workers: Int, samples: Int) async throws -> [Double] {
        let started = Mutex<[Int64: ContinuousClock.Instant]>([:])
        let probe = ClosureJobHandler { job, _, _ in
            let now = ContinuousClock.now
            started.withLock { $0[job.id] = now }
        }
        return try await Database.withDatabase(url, maxConnections: 2, logger: logger) { client in
            let pools = (0..<workers).map { _ in Database(url: url, maxConnections: 4, deadlines: .server, backgroundLogger: logger) }
            let workers = pools.map {
                WorkerPool(
                    queue: JobQueue(postgres: $0),
                    handlers: ["probe": probe],
                    options: .init(concurrency: 1, batchSize: 1, pollInterval: .seconds(30)),
                    logger: logger
                )
            }
            var latencies: [Double] = []
            try await runServices(pools.map(\.client) + workers) {
                try await Task.sleep(for: .milliseconds(500))
                for _ in 0..<samples {
                    let id = try await client.transaction(logger: logger) { connection in
                        try await JobQueue.enqueue(NewJob(kind: "probe"), connection: connection, logger: logger)
                    }
                    let committed = ContinuousClock.now
                    guard let id else { continue }
                    while started.withLock({ $0[id] }) == nil { try await Task.sleep(for: .microseconds(50)) }
                    let latency = started.withLock { $0[id]! } - committed
                    latencies.append(latency.inSeconds * 1000)
                    try await Task.sleep(for: .milliseconds(2))
                }
            }
            return latencies.sorted()
        }
    }

    static func worker(_ options: BenchOptions) async throws {
        let url = try DatabaseURL(try options.string("database-url"))
        let postgres = Database(url: url, maxConnections: 6, deadlines: .server, backgroundLogger: logger)
        let queue = JobQueue(postgres: postgres)
        let delay = Duration.milliseconds(options.int("delay-ms", default: 0))
        let effect = ClosureJobHandler { job, connection, logger in
            if delay > .zero { try await Task.sleep(for: delay) }
            try await connection.query("INSERT INTO public.effects (job_id) VALUES (\(job.id))", logger: logger)
        }
        let pool = WorkerPool(
            queue: queue,
            handlers: ["effect": effect],
            options: .init(
                concurrency: options.int("concurrency", default: 2),
                batchSize: options.int("batch", default: 20),
                pollInterval: .milliseconds(200),
                lease: .seconds(Int64(options.int("lease-seconds", default: 2)))
            ),
            logger: logger
        )
        let maintenance = QueueMaintenance(queue: queue, interval: .milliseconds(500), completedRetention: .seconds(86_400), logger: logger)
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: postgres.client), .init(service: pool), .init(service: maintenance)],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            )
        )
        print("queue-worker ready")
        try await group.run()
    }

    /// Runs services while `body` runs, then shuts them down gracefully.
    static func runServices(_ services: [any Service], _ body: () async throws -> Void) async throws {
        let group = ServiceGroup(services: services, logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            do {
                try await body()
            } catch {
                await group.triggerGracefulShutdown()
                throw error
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }
}
