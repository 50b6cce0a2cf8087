import Logging
import Metrics
import PostgresNIO

/// Reclaim's PostgreSQL: a `PostgresClient` whose every operation has a deadline.
///
/// PostgresNIO's queries ignore task cancellation, and a connection whose server vanished without closing it (a
/// failover behind a proxy, a network partition) never answers: a query on it, and everyone queued behind it,
/// would wait forever. So every operation here runs against a deadline (``Deadlines``). When it passes, the
/// operation's connection is closed, which fails the waiting query at once, the pool replaces the connection, and
/// the caller gets ``DatabaseTimeout``; a transaction cut that way was never committed, or its outcome is unknown,
/// exactly as when the server dies: callers already treat both as "retry".
///
/// The server side is bounded too: each session's `idle_in_transaction_session_timeout` ends a transaction whose
/// client is gone (so its row locks do not outlive it), see ``DatabaseURL/clientConfiguration(maxConnections:deadlines:)``.
public struct Database: Sendable {
    /// How long each kind of operation may take. Every operation first waits for a connection (`acquire`,
    /// counting a connection attempt), then runs within its own deadline counted from the moment it has one.
    public struct Deadlines: Sendable, Equatable {
        /// Waiting for a connection from the pool, including opening one.
        public var acquire: Duration
        /// One statement outside a transaction, every row read.
        public var query: Duration
        /// A transaction, from BEGIN to COMMIT.
        public var transaction: Duration

        public init(acquire: Duration, query: Duration, transaction: Duration) {
            self.acquire = acquire
            self.query = query
            self.transaction = transaction
        }

        /// `reclaim serve`'s defaults (`database:` in the config).
        public static let server = Deadlines(acquire: .seconds(5), query: .seconds(15), transaction: .seconds(30))
        /// Command-line tools: a migration or a prune may rightly run for long, and a person watches it.
        public static let commandLine = Deadlines(acquire: .seconds(10), query: .seconds(3600), transaction: .seconds(3600))
    }

    public let client: PostgresClient
    public let deadlines: Deadlines
    /// How the hot statements are sent (``PreparedStatements``); every body run here sees it as
    /// ``PreparedStatements/current``.
    public let preparedStatements: PreparedStatements

    public init(client: PostgresClient, deadlines: Deadlines, preparedStatements: PreparedStatements = .named) {
        self.client = client
        self.deadlines = deadlines
        self.preparedStatements = preparedStatements
    }

    /// A client for `url` whose sessions carry the server-side timeouts that go with `deadlines`; run
    /// ``client`` as a service (or use ``withDatabase(_:maxConnections:deadlines:logger:_:)``).
    public init(
        url: DatabaseURL,
        maxConnections: Int,
        deadlines: Deadlines,
        preparedStatements: PreparedStatements = .named,
        backgroundLogger: Logger
    ) {
        let configuration = url.clientConfiguration(maxConnections: maxConnections, deadlines: deadlines)
        self.init(
            client: PostgresClient(configuration: configuration, backgroundLogger: backgroundLogger),
            deadlines: deadlines,
            preparedStatements: preparedStatements
        )
    }

    // MARK: Operations

    /// Runs one statement and reads all its rows within the query deadline.
    @discardableResult
    public func query(_ query: PostgresQuery, logger: Logger, file: String = #fileID, line: Int = #line) async throws -> FetchedRows {
        try await withConnection(.query, deadline: deadlines.query, logger: logger) { connection in
            let rows = try await connection.query(query, logger: logger, file: file, line: line)
            var fetched: [PostgresRow] = []
            for try await row in rows { fetched.append(row) }
            return FetchedRows(fetched)
        }
    }

    /// Runs a prepared statement (as ``preparedStatements`` says) and decodes all its rows within the query deadline.
    public func execute<Statement: PostgresPreparedStatement>(_ statement: Statement, logger: Logger) async throws -> [Statement.Row]
    where Statement.Row: Sendable {
        try await withConnection(.query, deadline: deadlines.query, logger: logger) { connection in
            try await connection.run(statement, logger: logger)
        }
    }

    /// Runs `body` with a connection of its own for at most the query deadline.
    public func withConnection<Result: Sendable>(
        logger: Logger,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await withConnection(.query, deadline: deadlines.query, logger: logger, body)
    }

    /// Runs `body` with a connection of its own for at most `deadline`; nil for a session that lasts as long as
    /// its caller wants (a `LISTEN`): only waiting for the connection is bounded then.
    public func withConnection<Result: Sendable>(
        deadline: Duration?,
        logger: Logger,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await withConnection(.query, deadline: deadline, logger: logger, body)
    }

    /// Runs `body` in a transaction (BEGIN … COMMIT, ROLLBACK when it throws) within the transaction deadline, or
    /// `deadline` when given. An error thrown by `body` reaches the caller as itself rather than wrapped in
    /// `PostgresTransactionError` (when BEGIN and ROLLBACK went fine), so callers can tell their own errors from
    /// the database's.
    public func transaction<Result: Sendable>(
        logger: Logger,
        deadline: Duration? = nil,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await withConnection(.transaction, deadline: deadline ?? deadlines.transaction, logger: logger) { connection in
            try await Self.inTransaction(connection, logger: logger, body)
        }
    }

    private static func inTransaction<Result: Sendable>(
        _ connection: PostgresConnection,
        logger: Logger,
        _ body: @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await connection.query("BEGIN;", logger: logger)
        let result: Result
        do {
            result = try await body(connection)
        } catch {
            // A session that is over (the server ended it, or the connection closed) has rolled back with it, and a
            // ROLLBACK sent on it would never be answered (PostgresNIO 1.33, see withConnection): the transaction
            // would wait for its deadline. ``lease(_:_:)`` closes such a connection before the pool gets it back.
            if connection.isClosed || endsSession(error) { throw error }
            do {
                try await connection.query("ROLLBACK;", logger: logger)
            } catch let rollback {
                // The connection is unusable; the pool drops it, and PostgreSQL rolls back on its own.
                logger.debug("ROLLBACK failed", metadata: ["error": "\(String(reflecting: rollback))"])
            }
            throw error
        }
        try await connection.query("COMMIT;", logger: logger)
        return result
    }

    // MARK: Deadlines

    /// How often an operation's timer looks at its connection: a body whose connection closed under it and that has
    /// not answered by the next look is answered then (``DatabaseConnectionLost``), not at its deadline. An operation
    /// that ends sooner (nearly all) never wakes its timer.
    static let closeCheck: Duration = .milliseconds(200)

    /// The kind of operation, for ``DatabaseTimeout`` and the metric.
    public enum Operation: String, Sendable {
        case acquire, query, transaction
    }

    /// Leases a connection within the acquire deadline and runs `body` on it within `deadline`; on either
    /// deadline, or when the caller is cancelled, the connection (if any) is closed and the caller answered at once.
    ///
    /// The body runs in a task of its own and the caller does not wait for it past the deadline: PostgresNIO 1.33
    /// never answers a query sent on a connection that has already closed (vapor/postgres-nio#487, reverted in
    /// #501), so a body that sends one after a server restart would hold its caller forever, and closing the
    /// connection again would not help. Such a body is left behind, holding nothing: the pool drops a closed
    /// connection even while it is leased, and a closed connection commits nothing.
    private func withConnection<Result: Sendable>(
        _ operation: Operation,
        deadline: Duration?,
        logger: Logger,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        let watch = DeadlineWatch()
        let (client, acquireDeadline, preparedStatements) = (self.client, deadlines.acquire, self.preparedStatements)
        let answer = FirstAnswer<Result>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                answer.wait(continuation)
                if answer.isAnswered { return }  // cancelled before it began
                let work = Task {
                    do {
                        let result = try await Self.lease(client) { connection in
                            guard watch.attach(connection) else { throw watch.timeout ?? CancellationError() }
                            let outcome = await Swift.Result<Result, any Error>(catching: {
                                try await PreparedStatements.$current.withValue(preparedStatements) { try await body(connection) }
                            })
                            // A connection the deadline or the caller's cancellation closed goes back to the pool only
                            // once closed: PostgresNIO closes it on its event loop a moment later, and the pool would
                            // hand it, still open, to the next caller, whose query then failed or was never answered
                            // (issue 57: the next caller waited for its deadline, an hour in the tests).
                            if watch.detach() { try? await connection.closeFuture.get() }
                            return try outcome.get()
                        }
                        answer.give(.success(result))
                    } catch {
                        // The deadline closed the connection under the body: report the deadline, not the closed socket.
                        answer.give(.failure(watch.timeout ?? (watch.isAbandoned ? CancellationError() : error)))
                    }
                }
                let timer = Task {
                    let started = ContinuousClock.now
                    // Every tick: the deadlines, and whether the body's connection closed under it (a body that has
                    // not answered a tick after that never will: its statement went out on a closed connection).
                    while true {
                        let now = ContinuousClock.now
                        guard let attachedAt = watch.attachedAt else {
                            guard now < started + acquireDeadline else {
                                let timeout = DatabaseTimeout(operation: .acquire, after: acquireDeadline)
                                watch.expire(timeout)
                                work.cancel()  // a lease request ends when cancelled
                                answer.give(.failure(timeout))
                                return
                            }
                            try await Task.sleep(until: min(started + acquireDeadline, now + Self.closeCheck), clock: .continuous)
                            continue
                        }
                        if let deadline, now >= attachedAt + deadline {
                            let timeout = DatabaseTimeout(operation: operation, after: deadline)
                            watch.expire(timeout)
                            work.cancel()
                            answer.give(.failure(timeout))
                            return
                        }
                        if watch.closedUnderBody() {
                            work.cancel()
                            Counter(label: "reclaim_database_connections_lost_total", dimensions: [("operation", operation.rawValue)]).increment()
                            logger.warning(
                                "a PostgreSQL connection closed under an operation that never got its answer: failed now, not at its deadline",
                                metadata: ["operation": "\(operation.rawValue)"]
                            )
                            answer.give(.failure(DatabaseConnectionLost(operation: operation)))
                            return
                        }
                        let tick = now + Self.closeCheck
                        try await Task.sleep(until: deadline.map { min(attachedAt + $0, tick) } ?? tick, clock: .continuous)
                    }
                }
                answer.onAnswer {
                    timer.cancel()
                    if watch.isAbandoned { work.cancel() }
                }
            }
        } onCancel: {
            // A query ignores cancellation: close its connection (PostgreSQL rolls back what it had begun) and
            // answer the caller now.
            watch.abandon()
            answer.give(.failure(CancellationError()))
        }
    }
}

extension Database {
    /// Leases a connection that is open and runs `body` on it.
    ///
    /// A connection that closes while leased (the server restarted, or a deadline closed it) may go back to the pool
    /// before the pool has learnt of the close, and the pool would hand it to the next caller, whose first query
    /// would then never be answered. So: a leased connection found closed is given back only once its close has
    /// completed (the pool drops it then) and another is leased in its place; and a body that failed on a closed
    /// connection, or on an error that ends the session (``endsSession(_:)``), gives it back only once closed.
    fileprivate static func lease<Result: Sendable>(
        _ client: PostgresClient,
        _ body: @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        // The pool learns of a close on its event loop, after the close completes here: on a busy machine it can hand
        // the same closed connection out again at once (stop 68's loaded CI: three closed leases in a row). Each retry
        // waits a little longer, 5 ms doubling, about 1.3 s in all, before the pool is taken to be out of open ones.
        for attempt in 0..<8 {
            if attempt > 0 { try await Task.sleep(for: .milliseconds(5 << (attempt - 1))) }
            do {
                return try await client.withConnection { connection in
                    guard !connection.isClosed else {
                        try? await connection.closeFuture.get()
                        throw ClosedAtLease()
                    }
                    do {
                        return try await body(connection)
                    } catch {
                        if connection.isClosed {
                            try? await connection.closeFuture.get()
                        } else if endsSession(error) {
                            // PostgresNIO hands the caller the server's FATAL error before its channel has closed:
                            // still "open", the connection would go back to the pool and fail the next caller's
                            // query (stop 67's CI: a LISTEN session ended by pg_terminate_backend). Close it first.
                            try? await connection.close()
                        }
                        throw error
                    }
                }
            } catch is ClosedAtLease {
                continue  // only this lease's own find: a ClosedLease out of `body` (a lease nested in it) is its answer
            }
        }
        throw ClosedLease()
    }
}

/// The connection just leased had closed: ``Database/lease(_:_:)`` gives it back and leases another.
private struct ClosedAtLease: Error {}

/// Whether `error` means the session is over: the server ended it (FATAL or PANIC: PostgreSQL closes the connection
/// after sending one) or the connection itself failed.
func endsSession(_ error: any Error) -> Bool {
    guard let error = error as? PSQLError else { return false }
    switch error.code {
    case .server:
        let severity = error.serverInfo?[.severity]
        return severity == "FATAL" || severity == "PANIC"
    case .serverClosedConnection, .uncleanShutdown, .connectionError, .messageDecodingFailure, .unexpectedBackendMessage:
        return true
    default:
        return false
    }
}

/// The pool handed out connections that had closed, eight times running over about 1.3 s.
struct ClosedLease: Error, CustomStringConvertible {
    var description: String { "the PostgreSQL connections handed out had closed (the server restarted?)" }
}

/// A database operation passed its deadline (``Database/Deadlines``); its connection was closed. A transaction
/// that ended this way may or may not have committed, as when the server dies mid-COMMIT.
public struct DatabaseTimeout: Error, CustomStringConvertible, Sendable {
    public let operation: Database.Operation
    public let after: Duration

    public var description: String {
        switch operation {
        case .acquire: "no PostgreSQL connection within \(after)"
        case .query: "a PostgreSQL query took longer than \(after); its connection was closed"
        case .transaction: "a PostgreSQL transaction took longer than \(after); its connection was closed"
        }
    }
}

/// An operation's connection closed under it (the server restarted or ended the session, the network dropped it)
/// and PostgresNIO did not answer the operation's statement: answered within ``Database/closeCheck`` instead of at
/// its deadline. Like ``DatabaseTimeout``, a transaction that ended this way may or may not have committed.
public struct DatabaseConnectionLost: Error, CustomStringConvertible, Sendable {
    public let operation: Database.Operation

    public var description: String { "the PostgreSQL connection of a \(operation.rawValue) closed under it (server restarted or session ended?)" }
}

/// All rows of a statement, read before its deadline; an `AsyncSequence` so PostgresNIO's `decode` applies.
public struct FetchedRows: AsyncSequence, Sendable {
    public typealias Element = PostgresRow
    public let rows: [PostgresRow]

    init(_ rows: [PostgresRow]) { self.rows = rows }

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: IndexingIterator<[PostgresRow]>
        public mutating func next() async throws -> PostgresRow? { base.next() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: rows.makeIterator()) }
}
