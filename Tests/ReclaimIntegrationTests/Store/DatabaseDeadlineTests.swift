import Foundation
import Logging
import PostgresNIO
import ReclaimTestSupport
import Synchronization
import Testing

@testable import ReclaimStore

/// Issue 28: every PostgreSQL operation has a deadline, and a caller is answered at its deadline or cancellation
/// whatever its connection does.
@Suite("Database deadlines", .poolWatchdog)
struct DatabaseDeadlineTests {
    let logger = TestPostgres.logger
    static let short = Database.Deadlines(acquire: .seconds(1), query: .seconds(1), transaction: .seconds(2))

    /// A database with `deadlines` on a fresh migrated test database.
    func withDatabase(_ deadlines: Database.Deadlines, maxConnections: Int = 4, _ body: @Sendable (Database) async throws -> Void) async throws {
        let url = try await TestPostgres.shared.newDatabase()
        try await Database.withDatabase(url, maxConnections: maxConnections, deadlines: deadlines, logger: logger, body)
    }

    /// Waits until the pool has a connection open: opening one (first, or after a deadline closed the last) can
    /// take longer than the 1 s acquire deadline on a machine busy with the whole suite, and that is not what
    /// these tests are about.
    func connected(_ database: Database) async throws {
        try await eventually("the pool has a connection", timeout: .seconds(60), every: .milliseconds(100)) {
            (try? await firstInt(database, "SELECT 1")) == 1
        }
    }

    func seconds(_ duration: Duration) -> Double { Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18 }

    @Test("a statement past the query deadline fails with DatabaseTimeout at the deadline, and the pool serves the next")
    func queryDeadline() async throws {
        try await withDatabase(Self.short) { database in
            try await connected(database)
            let started = ContinuousClock.now
            await #expect(throws: DatabaseTimeout.self) { try await database.query("SELECT pg_sleep(30)", logger: logger) }
            let waited = ContinuousClock.now - started
            #expect(waited >= .milliseconds(900) && waited < .seconds(20), "answered after \(waited)")
            try await connected(database)
            let rows = try await database.query("SELECT 1::int", logger: logger)
            for try await one in rows.decode(Int.self) { #expect(one == 1) }
        }
    }

    @Test("a transaction past its deadline fails with DatabaseTimeout, its connection is closed and its writes are gone")
    func transactionDeadline() async throws {
        try await withDatabase(Self.short) { database in
            try await connected(database)
            try await database.query("CREATE TABLE public.marks (n int)", logger: logger)
            let started = ContinuousClock.now
            let error = await #expect(throws: DatabaseTimeout.self) {
                try await database.transaction(logger: logger) { connection in
                    try await connection.query("INSERT INTO public.marks VALUES (1)", logger: logger)
                    try await connection.query("SELECT pg_sleep(30)", logger: logger)
                }
            }
            #expect(error?.operation == .transaction)
            #expect(ContinuousClock.now - started < .seconds(20))
            try await connected(database)
            #expect(try await firstInt(database, "SELECT count(*) FROM public.marks") == 0)
        }
    }

    @Test("waiting for a connection is bounded by the acquire deadline")
    func acquireDeadline() async throws {
        try await withDatabase(Self.short, maxConnections: 1) { database in
            // The pool's one connection opened first (on a busy machine opening one can take longer than the
            // 1 s acquire deadline), so that the operation below gets it at once.
            try await eventually("the pool has its connection", timeout: .seconds(60), every: .milliseconds(100)) {
                (try? await firstInt(database, "SELECT 1")) == 1
            }
            try await database.withConnection(deadline: .seconds(10), logger: logger) { _ in
                // The pool's only connection is taken: the next operation cannot get one.
                let error = await #expect(throws: DatabaseTimeout.self) { try await database.query("SELECT 1", logger: logger) }
                #expect(error?.operation == .acquire)
            }
        }
    }

    /// Before: answered at the transaction's deadline, an hour for the command line and the tests, 30 s for a worker's
    /// batch (found with the worker's batches while sessions were ended under them).
    @Test(
        "a query sent on a connection the server has closed is answered within a second (PostgresNIO never answers it), not at an hour's deadline"
    )
    func queryOnClosedConnection() async throws {
        try await withDatabase(.commandLine) { database in
            try await connected(database)
            let started = ContinuousClock.now
            let error = try await within(.seconds(20)) {
                await #expect(throws: DatabaseConnectionLost.self) {
                    try await database.transaction(logger: logger) { connection in
                        // The server ends this session; the next query goes out on a closed connection.
                        _ = try? await connection.query("SELECT pg_terminate_backend(pg_backend_pid())", logger: logger)
                        try await Task.sleep(for: .milliseconds(200))
                        try await connection.query("SELECT 1", logger: logger)
                    }
                }
            }
            #expect(error?.operation == .transaction)
            // The 200 ms pause, a look that finds the connection closed and one more; a busy machine may add a little.
            #expect(ContinuousClock.now - started < .seconds(5))
            try await connected(database)
            let one = try await firstInt(database, "SELECT 1")
            #expect(one == 1)
        }
    }

    @Test("a ClosedLease out of a body (a lease nested in it found no open connection) is the body's answer: the body runs once")
    func closedLeaseFromBody() async throws {
        final class Runs: Sendable { let count = Atomic(0) }
        try await withDatabase(.commandLine) { database in
            try await connected(database)
            let runs = Runs()
            await #expect(throws: ClosedLease.self) {
                try await database.transaction(logger: logger) { connection in
                    runs.count.add(1, ordering: .relaxed)
                    try await connection.query("SELECT 1", logger: logger)
                    throw ClosedLease()
                }
            }
            #expect(runs.count.load(ordering: .relaxed) == 1, "the lease took its body's error for a closed connection it leased")
        }
    }

    @Test("cancelling the caller answers it at once and closes the connection under its query")
    func cancellation() async throws {
        try await withDatabase(.server) { database in
            let task = Task { try await database.query("SELECT pg_sleep(30)", logger: logger) }
            try await Task.sleep(for: .milliseconds(500))
            let started = ContinuousClock.now
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
            #expect(ContinuousClock.now - started < .seconds(10))
            // The server ended the statement: no session of this database (tests run at once on one cluster) still sleeps.
            try await eventually("the cancelled statement ended", timeout: .seconds(10), every: .milliseconds(100)) {
                try await firstInt(
                    database,
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND query = 'SELECT pg_sleep(30)'"
                ) == 0
            }
        }
    }

    /// The hang of issue 57: a caller cancelled while its body waited closed the body's connection, and the body,
    /// ending at once on the cancellation, gave the connection back to the pool before the close was done. The pool
    /// handed it to the next caller, whose query PostgresNIO never answered once the close went through: that caller
    /// waited for its deadline, an hour for the command line and the tests (WorkerPoolTests.wakeUpLatency hung so:
    /// the shutdown cancelled the LISTEN session, and the worker's last statement took its connection).
    @Test("with an hour's deadlines, the next caller after a cancelled one gets an open connection and its answer at once, 30 times")
    func nextCallerAfterCancellation() async throws {
        // Two connections: with one, the next caller's request would wait for the closing one, which PostgresNIO's
        // pool (1.33) drops without opening another for a request already queued: it would wait for its acquire
        // deadline instead.
        try await withDatabase(.commandLine, maxConnections: 2) { database in
            try await connected(database)
            for round in 1...30 {
                // A body that ends the moment it is cancelled, as a LISTEN session's loop does.
                let waiting = Task {
                    try await database.withConnection(deadline: nil, logger: logger) { _ in try await Task.sleep(for: .seconds(60)) }
                }
                try await Task.sleep(for: .milliseconds(50))
                waiting.cancel()
                _ = try? await waiting.value
                // Odd rounds ask at once; even ones pause between taking the connection and the statement, as a
                // batch does between its statements: a closing connection has closed by then, and PostgresNIO never
                // answers a statement sent on it (the hang), where at once it fails it (the PSQLError).
                let pause: Duration = round.isMultiple(of: 2) ? .milliseconds(100) : .zero
                let one = try await within(.seconds(20)) {
                    try await database.withConnection(logger: logger) { connection in
                        try await Task.sleep(for: pause)
                        var value: Int?
                        for try await one in try await connection.query("SELECT 1::int", logger: logger).decode(Int.self) { value = one }
                        return value
                    }
                }
                #expect(one == 1, "round \(round)")
            }
        }
    }
}

extension DatabaseDeadlineTests {
    /// The CI failure of stop 67: the server ended a session while it was leased (LiveOfferIndexTests ends the
    /// LISTEN session with pg_terminate_backend). PostgresNIO fails the body with the server's FATAL error a moment
    /// before its channel closes, so the connection went back to the pool still open, and the next caller's query
    /// went out on it and failed with a PSQLError.
    ///
    /// In a transaction (stop 86, found with the worker's batches while sessions were ended under them): the body
    /// failed with the FATAL error and its ROLLBACK went out on the closing connection, which PostgresNIO never
    /// answers, so the transaction waited for its deadline (an hour here and for `reclaim` commands, 30 s for a
    /// worker's batch).
    @Test(
        "after the server ends a leased session (FATAL), in a transaction or not, the caller is answered at once and the next caller gets an open connection and its answer, 30 times",
        arguments: [false, true]
    )
    func nextCallerAfterServerEndedSession(inTransaction: Bool) async throws {
        try await withDatabase(.commandLine, maxConnections: 1) { database in
            try await connected(database)
            for round in 1...30 {
                // Even rounds end the session after a pause, as a batch does between its statements.
                let pause: Duration = round.isMultiple(of: 2) ? .milliseconds(100) : .zero
                let endSession: @Sendable (PostgresConnection) async throws -> Void = { connection in
                    try await Task.sleep(for: pause)
                    let rows = try await connection.query("SELECT pg_terminate_backend(pg_backend_pid())", logger: logger)
                    for try await _ in rows {}
                }
                let failed = try await within(.seconds(20)) {
                    do {
                        if inTransaction {
                            try await database.transaction(logger: logger, endSession)
                        } else {
                            try await database.withConnection(deadline: nil, logger: logger, endSession)
                        }
                        return false
                    } catch is PSQLError {
                        return true
                    }
                }
                #expect(failed, "round \(round)")
                let one = try await within(.seconds(20)) { try await firstInt(database, "SELECT 1") }
                #expect(one == 1, "round \(round)")
            }
        }
    }
}
