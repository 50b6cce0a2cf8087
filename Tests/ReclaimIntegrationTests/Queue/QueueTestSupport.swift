import Logging
import PostgresNIO
import ReclaimService
import ReclaimStore
import ServiceLifecycle

/// The effect a test handler writes: one row per run, in the job's transaction. Exactly-once
/// means as many rows as jobs and no job id twice.
func createEffectsTable(_ client: Database) async throws {
    try await client.query(
        "CREATE TABLE public.effects (job_id bigint NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())",
        logger: TestPostgres.logger
    )
}

struct EffectCounts: Equatable {
    let rows: Int
    let distinctJobs: Int
}

func effectCounts(_ client: Database) async throws -> EffectCounts {
    let rows = try await client.query("SELECT count(*)::bigint, count(DISTINCT job_id)::bigint FROM public.effects", logger: TestPostgres.logger)
    for try await (all, distinct) in rows.decode((Int64, Int64).self) { return EffectCounts(rows: Int(all), distinctJobs: Int(distinct)) }
    return EffectCounts(rows: 0, distinctJobs: 0)
}

let effectHandler = ClosureJobHandler { job, connection, logger in
    try await connection.query("INSERT INTO public.effects (job_id) VALUES (\(job.id))", logger: logger)
}

func enqueue(_ count: Int, kind: String = "effect", client: Database) async throws {
    var remaining = count
    while remaining > 0 {
        let chunk = min(remaining, 5000)
        try await client.transaction(logger: TestPostgres.logger) { connection in
            try await JobQueue.enqueue(
                kind: kind,
                payloads: Array(repeating: "{}", count: chunk),
                connection: connection,
                logger: TestPostgres.logger
            )
        }
        remaining -= chunk
    }
}

func jobCount(_ client: Database, state: JobState) async throws -> Int {
    try await JobQueue(postgres: client).stats(logger: TestPostgres.logger).counts[state] ?? 0
}

/// Runs services in a group until `body` returns, then shuts them down gracefully.
func withServices<T: Sendable>(_ services: [any Service], _ body: @Sendable () async throws -> T) async throws -> T {
    let group = ServiceGroup(services: services, logger: TestPostgres.logger)
    return try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask { try await group.run() }
        do {
            let result = try await body()
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
            return result
        } catch {
            await group.triggerGracefulShutdown()
            try? await tasks.waitForAll()
            throw error
        }
    }
}
