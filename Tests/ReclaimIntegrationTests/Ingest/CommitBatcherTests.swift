import PostgresNIO
import ReclaimService
import ReclaimStore
import ReclaimTestSupport
import Synchronization
import Testing

@Suite("Group commit (CommitBatcher)", .poolWatchdog)
struct CommitBatcherTests {
    let logger = TestPostgres.logger

    /// What the flush saw: how many batches, how many were writing at once at most.
    final class Observed: Sendable {
        private let state = Mutex((writing: 0, maxWriting: 0, batches: 0))
        func begin() {
            state.withLock { state in
                state.writing += 1
                state.maxWriting = max(state.maxWriting, state.writing)
                state.batches += 1
            }
        }
        func end() { state.withLock { $0.writing -= 1 } }
        var maxWriting: Int { state.withLock { $0.maxWriting } }
        var batches: Int { state.withLock { $0.batches } }
    }

    /// A batcher whose flush inserts the items into `items` and answers each with ten times itself;
    /// a batch holding a negative item fails after its insert (so the insert must roll back).
    func makeBatcher(_ client: Database, observed: Observed) -> CommitBatcher<Int, Int> {
        CommitBatcher(postgres: client, logger: logger) { items, connection, logger in
            observed.begin()
            defer { observed.end() }
            try await connection.query("INSERT INTO items SELECT unnest(\(items))", logger: logger)
            // Long enough for the other callers to pile up while this batch writes.
            try await Task.sleep(for: .milliseconds(5))
            if items.contains(where: { $0 < 0 }) { throw PoisonedBatch() }
            return items.map { $0 * 10 }
        }
    }

    struct PoisonedBatch: Error {}

    /// Which callers were told of success, which of failure.
    final class Answers: Sendable {
        private let state = Mutex([Int: Bool]())
        func record(_ n: Int, _ succeeded: Bool) { state.withLock { $0[n] = succeeded } }
        var split: (succeeded: Set<Int>, failed: Set<Int>) {
            state.withLock { answers in (Set(answers.filter(\.value).keys), Set(answers.filter { !$0.value }.keys)) }
        }
    }

    func stored(_ client: Database) async throws -> Set<Int> {
        var stored = Set<Int>()
        for try await n in try await client.query("SELECT n FROM items", logger: logger).decode(Int.self) { stored.insert(n) }
        return stored
    }

    @Test("Concurrent callers share transactions, one batch writes at a time, and each gets its own answer after COMMIT")
    func concurrentCallers() async throws {
        let url = try await TestPostgres.shared.newDatabase(migrated: false)
        // 300 callers' checks share 7 connections: on a machine busy with the whole suite one can wait longer than
        // the command line's 10 s for a connection, which is not what this test is about.
        let patient = Database.Deadlines(acquire: .seconds(120), query: .seconds(120), transaction: .seconds(120))
        try await Database.withDatabase(url, maxConnections: 8, deadlines: patient, logger: logger) { client in
            try await client.query("CREATE TABLE items (n int PRIMARY KEY)", logger: logger)
            let observed = Observed()
            let batcher = makeBatcher(client, observed: observed)
            let count = 300
            try await withThrowingTaskGroup(of: Void.self) { group in
                for n in 0..<count {
                    group.addTask {
                        let output = try await batcher.submit(n)
                        #expect(output == n * 10)
                        // Answered only after COMMIT: another connection sees the row already.
                        let rows = try await client.query("SELECT count(*) FROM items WHERE n = \(n)", logger: logger)
                        for try await seen in rows.decode(Int.self) { #expect(seen == 1, "item \(n) answered before it was committed") }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await stored(client) == Set(0..<count))
            #expect(observed.maxWriting == 1, "batches wrote concurrently")
            #expect(observed.batches < count / 4, "\(observed.batches) transactions for \(count) concurrent callers: too little grouping")
        }
    }

    @Test("A write that hangs (here on a table lock) is cut off at the timeout, and later callers are served")
    func hungWrite() async throws {
        let url = try await TestPostgres.shared.newDatabase(migrated: false)
        try await Database.withDatabase(url, maxConnections: 8, logger: logger) { client in
            try await client.query("CREATE TABLE items (n int PRIMARY KEY)", logger: logger)
            // 2 s: short enough to tell from the lock's 20 s, long enough for the next caller's
            // whole transaction on a machine busy with the rest of the suite.
            let batcher = CommitBatcher<Int, Int>(postgres: client, timeout: .seconds(2), logger: logger) { items, connection, logger in
                try await connection.query("INSERT INTO items SELECT unnest(\(items))", logger: logger)
                return items.map { $0 * 10 }
            }
            try await client.withConnection(logger: logger) { locker in
                try await locker.query("BEGIN", logger: logger)
                try await locker.query("LOCK TABLE items IN ACCESS EXCLUSIVE MODE", logger: logger)
                // The lock goes after 20 s; a write that outlives its timeout answers only then.
                async let unlocked: Void = {
                    try await Task.sleep(for: .seconds(20))
                    try await locker.query("ROLLBACK", logger: logger)
                }()
                let start = ContinuousClock.now
                await #expect(throws: (any Error).self) { try await batcher.submit(1) }
                let waited = ContinuousClock.now - start
                // Far from the lock's 20 s (a busy machine stretched the 2 s to 7 once).
                #expect(waited < .seconds(12), "the caller of a hung write waited \(waited), past its 2 s timeout")
                try await unlocked
            }
            #expect(try await batcher.submit(2) == 20)
            #expect(try await stored(client) == [2])
        }
    }

    @Test("A batch that fails answers its callers with the error, commits nothing, and the next batches go on")
    func failedBatch() async throws {
        let url = try await TestPostgres.shared.newDatabase(migrated: false)
        try await Database.withDatabase(url, maxConnections: 8, logger: logger) { client in
            try await client.query("CREATE TABLE items (n int PRIMARY KEY)", logger: logger)
            let batcher = makeBatcher(client, observed: Observed())
            let answers = Answers()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for n in [-1] + Array(1..<100) {
                    group.addTask {
                        do {
                            _ = try await batcher.submit(n)
                            answers.record(n, true)
                        } catch is PoisonedBatch {
                            answers.record(n, false)
                        }
                    }
                }
                try await group.waitForAll()
            }
            let (succeeded, failed) = answers.split
            #expect(failed.contains(-1))
            #expect(succeeded.count + failed.count == 100, "every caller is answered")
            #expect(try await stored(client) == succeeded, "exactly the callers told of success are stored")
            // The turn was passed on: a lone caller afterwards is committed at once.
            #expect(try await batcher.submit(1000) == 10000)
            #expect(try await stored(client).contains(1000))
        }
    }

    @Test("the wait queue is bounded: past maxWaiting a caller is refused at once with CommitQueueFull, and the others commit")
    func boundedQueue() async throws {
        let url = try await TestPostgres.shared.newDatabase(migrated: false)
        try await Database.withDatabase(url, maxConnections: 8, logger: logger) { client in
            try await client.query("CREATE TABLE items (n int PRIMARY KEY)", logger: logger)
            let writing = Gate()
            let release = Gate()
            // The database is slow: the first batch holds its transaction until released, and the one transaction
            // allowed keeps the next callers waiting.
            let batcher = CommitBatcher<Int, Int>(postgres: client, maxWaiting: 2, maxTransactions: 1, logger: logger) { items, connection, logger in
                try await connection.query("INSERT INTO items SELECT unnest(\(items))", logger: logger)
                writing.open()
                try await release.wait()
                return items
            }
            try await withThrowingTaskGroup(of: Int.self) { group in
                group.addTask { try await batcher.submit(1) }
                try await writing.wait()
                group.addTask { try await batcher.submit(2) }
                group.addTask { try await batcher.submit(3) }
                try await eventually("two callers wait") { batcher.waitingCount == 2 }
                let started = ContinuousClock.now
                await #expect(throws: CommitQueueFull.self) { _ = try await batcher.submit(4) }
                #expect(ContinuousClock.now - started < .milliseconds(500), "a refusal must not wait for the database")
                release.open()
                var answered: Set<Int> = []
                for try await n in group { answered.insert(n) }
                #expect(answered == [1, 2, 3])
            }
            #expect(try await stored(client) == [1, 2, 3])
        }
    }

    /// A flag tasks wait on until it is opened (polled: tests only).
    final class Gate: Sendable {
        private let isOpen = Mutex(false)
        func open() { isOpen.withLock { $0 = true } }
        func wait() async throws {
            try await eventually("the gate opens", every: .milliseconds(5)) { isOpen.withLock { $0 } }
        }
    }
}
