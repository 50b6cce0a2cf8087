import Foundation
import PostgresNIO
import ReclaimService
import ReclaimStore
import ReclaimTestSupport
import Synchronization
import Testing

/// Stop 86's CI: the corpus's jobs were never all processed (AuditLogTests, 60 s), a batch still in flight 30 s after
/// the shutdown began. Ending sessions under the worker showed one way a batch holds its lane for its whole deadline
/// (an hour in the tests, 30 s for `reclaim worker`): a statement or ROLLBACK sent on a connection the server had
/// just closed, which PostgresNIO 1.33 never answers.
@Suite("The worker goes on while PostgreSQL ends its sessions", .poolWatchdog)
struct EndedSessionsTests {
    @Test(
        "the corpus is processed while the sessions of batches under way are ended every 30 to 300 ms (8 of them), with the tests' hour-long deadlines",
        arguments: 0..<4
    )
    func batchesGoOn(_ round: Int) async throws {
        let setup = try CampaignTestSetup()
        defer { setup.remove() }
        let corpus = try CorpusCampaignTests.corpusInSignedDateOrder()
        try await withTestDatabase { client, url in
            let dependencies = try Dependencies.test(postgres: client, config: setup.config)
            try await ingestNotifications(corpus.map(\.notification.body), dependencies: dependencies)
            let ended = Atomic(0)
            // Enough to end several batches per round, and bounded: on a busy machine a batch can take longer than the
            // pauses between ends, and ending sessions without end would then test the machine's speed (CI once took
            // 59 s). Few, too: a session found idle can have begun its next statement when the end reaches it, and
            // PostgresNIO 1.33.2 traps when a session streaming rows is ended (CI crashed so once, with 25 per round).
            let limit = 8
            // A session between two statements of its transaction: the worker's batches (never the poll below, which
            // is one statement; nor a session mid-statement: PostgresNIO 1.33 traps when one streaming a large result
            // is ended, a crash this test is not about).
            let ender = Task {
                try await Database.withDatabase(url, maxConnections: 1, logger: TestPostgres.logger) { database in
                    while !Task.isCancelled, ended.load(ordering: .relaxed) < limit {
                        try await Task.sleep(for: .milliseconds(Int.random(in: 30...300)))
                        let rows = try await database.query(
                            """
                            SELECT count(*)::bigint FROM (
                                SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                                WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'idle in transaction'
                                ORDER BY random() LIMIT 1) AS ended
                            """,
                            logger: TestPostgres.logger
                        )
                        for try await count in rows.decode(Int64.self) { ended.add(Int(count), ordering: .relaxed) }
                    }
                }
            }
            defer { ender.cancel() }
            let started = ContinuousClock.now
            try await processNotifications([], client: client, dependencies: dependencies)
            let took = ContinuousClock.now - started
            ender.cancel()
            _ = try? await ender.value
            #expect(ended.load(ordering: .relaxed) > 0, "no session was ended: the test proves nothing")
            // Each session ended costs the batch a retry, never its deadline.
            #expect(took < .seconds(45), "round \(round): \(took) with \(ended.load(ordering: .relaxed)) sessions ended")
        }
    }
}
