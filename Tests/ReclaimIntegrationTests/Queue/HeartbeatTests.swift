import Foundation
import Logging
import PostgresNIO
import ReclaimDev
import ReclaimService
import ReclaimStore
import ReclaimTestSupport
import Synchronization
import Testing

/// Issue 28: a job whose handler stopped must not stay `running` under a live worker's heartbeat.
@Suite("The heartbeat keeps only running handlers' jobs leased", .poolWatchdog)
struct HeartbeatTests {
    let logger = TestPostgres.logger

    @Test("a job whose transaction and failure record were lost to a PostgreSQL restart runs again once its lease is out")
    func lostJobReturns() async throws {
        let cluster = try await TestPostgres.makeCluster(name: "heartbeat", durable: true)
        let url = try cluster.url(database: "postgres")
        try await Database.withDatabase(url, maxConnections: 1, logger: logger) { try await Migrator().migrate(client: $0, logger: logger) }
        // Server-like deadlines, short: the batch whose connection died is abandoned within seconds.
        let deadlines = Database.Deadlines(acquire: .seconds(2), query: .seconds(5), transaction: .seconds(5))
        try await Database.withDatabase(url, maxConnections: 8, deadlines: deadlines, logger: logger) { client in
            try await createEffectsTable(client)
            try await client.transaction(logger: logger) { connection in
                try await JobQueue.enqueue(NewJob(kind: "outage"), connection: connection, logger: logger)
            }
            // The first run takes PostgreSQL down under its own transaction (immediate stop, like a failover) and
            // brings it back two seconds later. Its INSERT then goes out on a connection that has closed, which
            // PostgresNIO never answers (vapor/postgres-nio#501): the handler hangs, as the jobs did.
            let runs = Atomic(0)
            let restart = Mutex<Task<Void, Never>?>(nil)
            let outage = ClosureJobHandler { job, connection, logger in
                if runs.add(1, ordering: .relaxed).newValue == 1 {
                    try await cluster.stop(immediate: true)
                    restart.withLock {
                        $0 = Task {
                            try? await Task.sleep(for: .seconds(2))
                            try? await cluster.start(logger: logger)
                        }
                    }
                }
                try await connection.query("INSERT INTO public.effects (job_id) VALUES (\(job.id))", logger: logger)
            }
            let queue = JobQueue(postgres: client)
            let pool = WorkerPool(
                queue: queue,
                handlers: ["outage": outage],
                options: .init(concurrency: 1, batchSize: 1, pollInterval: .milliseconds(200), lease: .seconds(3)),
                logger: logger
            )
            let maintenance = QueueMaintenance(queue: queue, interval: .milliseconds(500), completedRetention: .seconds(3600), logger: logger)
            try await withServices([pool, maintenance]) {
                // Before the fix the batch waited forever and the heartbeat kept extending its lease: the job never
                // ran again. Now its transaction's deadline abandons it, the heartbeat stops, the lease runs out.
                try await eventually("the job ran again and completed", timeout: .seconds(60), every: .milliseconds(200)) {
                    (try? await jobCount(client, state: .completed)) == 1
                }
            }
            await restart.withLock { $0 }?.value
            #expect(try await effectCounts(client) == EffectCounts(rows: 1, distinctJobs: 1))
            #expect(try await jobCount(client, state: .running) == 0)
        }
    }
}
