import Logging
import PostgresNIO
import ReclaimStore
import Synchronization

/// Group commit: concurrent callers' writes are committed together in one transaction, and each
/// caller is answered only after that transaction's COMMIT.
///
/// Transactions take turns to write: one at a time holds the turn, takes every caller waiting at
/// that moment as its batch, writes it, passes the turn on and commits. So writes never compete
/// for PostgreSQL, batches grow with the load, and a COMMIT's flush to disk overlaps the next
/// batch's write. The next transaction leases its connection and runs BEGIN while the current one
/// writes, so a turn is one round trip. A lone caller starts a transaction at once: no added
/// latency when idle. At most `maxTransactions` are in flight, and each ends after its batch, so
/// there is no background service to run.
public final class CommitBatcher<Item: Sendable, Output: Sendable>: Sendable {
    public typealias Flush = @Sendable ([Item], PostgresConnection, Logger) async throws -> [Output]
    /// Run in each transaction before it waits for the turn: what the flush needs taken first, off the turn's path.
    public typealias Prepare = @Sendable (PostgresConnection, Logger) async throws -> Void
    fileprivate typealias Waiter = (item: Item, continuation: CheckedContinuation<Output, any Error>)

    private enum NextTurn {
        case handOver(CheckedContinuation<[Waiter]?, Never>, [Waiter])
        case start
        case none
    }

    private struct State {
        var waiting: [Waiter] = []
        /// A transaction holds the turn to write.
        var writing = false
        /// A transaction was started and has not taken its batch yet (at most one: it takes
        /// everything waiting, so a second would find nothing).
        var nextStarted = false
        /// That transaction, once it has run BEGIN and waits for the turn (nil handed to it: given up).
        var nextInLine: (turn: ObjectIdentifier, continuation: CheckedContinuation<[Waiter]?, Never>)?
        /// Transactions between their start and their callers' answers.
        var transactions = 0
    }

    private let postgres: Database
    /// Callers that may wait for a transaction at once; one more is refused with ``CommitQueueFull``.
    private let maxWaiting: Int
    private let maxBatch: Int
    private let maxTransactions: Int
    private let flush: Flush
    private let prepare: Prepare?
    private let logger: Logger
    private let state = Mutex(State())
    /// Each transaction is a step here: one that never ends makes `/healthz` fail.
    private let liveness: Liveness

    /// Longest a transaction may take, once it has its connection, before its callers are told it failed. Safe
    /// either way: an answer of failure for a commit that did land only causes a retry, which finds the row stored.
    private let timeout: Duration
    /// `timeout` as PostgreSQL's `statement_timeout` for the transaction's write.
    private let statementTimeout: String

    public init(
        postgres: Database,
        maxWaiting: Int = 4096,
        maxBatch: Int = 256,
        maxTransactions: Int = 4,
        timeout: Duration = .seconds(5),
        liveness: Liveness = Liveness(bound: .seconds(60)),
        logger: Logger,
        prepare: Prepare? = nil,
        flush: @escaping Flush
    ) {
        precondition(maxBatch > 0 && maxTransactions > 0 && maxWaiting > 0)
        self.postgres = postgres
        self.maxWaiting = maxWaiting
        self.timeout = timeout
        self.statementTimeout = "\(Int((timeout / .milliseconds(1)).rounded(.up)))ms"
        self.maxBatch = maxBatch
        self.maxTransactions = maxTransactions
        self.flush = flush
        self.prepare = prepare
        self.logger = logger
        self.liveness = liveness
    }

    /// Callers waiting for a transaction to take them (for metrics and tests).
    public var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// Queues `item` for the next commit and returns its output once that commit succeeded;
    /// throws the transaction's error otherwise (nothing of the batch was committed), or
    /// ``CommitQueueFull`` at once when `maxWaiting` callers already wait: memory stays bounded and
    /// the caller can say "retry later" instead of queueing behind a database that cannot keep up.
    public func submit(_ item: Item) async throws -> Output {
        try await withCheckedThrowingContinuation { continuation in
            let start = state.withLock { state -> Bool? in
                guard state.waiting.count < maxWaiting else { return nil }
                state.waiting.append((item, continuation))
                return startNextIfNeeded(&state)
            }
            switch start {
            case nil: continuation.resume(throwing: CommitQueueFull())
            case true?: startTransaction()
            case false?: break
            }
        }
    }

    /// Whether to start a transaction for the callers waiting (counted as started if so).
    private func startNextIfNeeded(_ state: inout State) -> Bool {
        guard !state.nextStarted, !state.waiting.isEmpty, state.transactions < maxTransactions else { return false }
        state.nextStarted = true
        state.transactions += 1
        return true
    }

    /// Takes the turn and its batch: the callers waiting now, oldest first.
    private func takeBatch(_ state: inout State) -> [Waiter] {
        state.writing = true
        state.nextStarted = false
        return takeWaiting(&state)
    }

    private func takeWaiting(_ state: inout State) -> [Waiter] {
        let count = min(state.waiting.count, maxBatch)
        defer { state.waiting.removeFirst(count) }
        return Array(state.waiting.prefix(count))
    }

    private func startTransaction() {
        Task { await self.runTransaction() }
    }

    /// One transaction: BEGIN, wait for the turn, write the batch, pass the turn on, COMMIT, answer.
    private func runTransaction() async {
        let turn = Turn<Waiter>()
        let step = liveness.begin("ingest transaction")
        defer { liveness.end(step) }
        do {
            let (flush, prepare, logger, statementTimeout) = (self.flush, self.prepare, self.logger, self.statementTimeout)
            // The deadline closes the connection of a transaction that outlives it (a server that vanished without
            // closing it never answers), so the turn passes on and its callers hear 503 instead of waiting forever.
            let outputs = try await postgres.transaction(logger: logger, deadline: timeout) { connection in
                // A write that hangs on a lock (taken by a migration, say) would hold the turn, and with it every
                // caller, until the deadline closes the connection; PostgreSQL ends it first and the connection is
                // kept. Set before the turn, so it costs no time on the path every batch waits for.
                try await connection.query("SELECT set_config('statement_timeout', \(statementTimeout), true)", logger: logger)
                try await prepare?(connection, logger)
                // Nil: this transaction was given up at its deadline while it waited, and is out of the line.
                guard let batch = await self.waitForTurn(turn) else { throw CancellationError() }
                guard turn.take(batch) else {
                    // Given up just as the turn came: the batch is not this transaction's to write.
                    self.requeue(batch)
                    throw CancellationError()
                }
                let outputs = try await flush(batch.map(\.item), connection, logger)
                // Checked before COMMIT: every caller must get an answer for what was committed.
                guard outputs.count == batch.count else { throw CommitBatcherMismatch() }
                if turn.pass() { self.passTurn() }
                return outputs
            }
            for (waiter, output) in zip(turn.batch, outputs) { waiter.continuation.resume(returning: output) }
        } catch {
            // The database answered this transaction's failure, or its deadline passed while its body still runs (a
            // query on a dead connection is never answered): either way the body is given up, atomically with it
            // taking the turn, so that it neither keeps the turn nor writes a batch that is answered here.
            if let held = turn.abandon() {
                if held.holdsTurn { passTurn() }
                for waiter in held.batch { waiter.continuation.resume(throwing: error) }
            } else {
                leaveLine(turn)
                for waiter in giveUpStart() { waiter.continuation.resume(throwing: error) }
            }
        }
        let start = state.withLock { state in
            state.transactions -= 1
            return startNextIfNeeded(&state)
        }
        if start { startTransaction() }
    }

    /// A transaction that never got the turn (no connection, BEGIN failed) gives up its start. The
    /// callers waiting were its to write, so they learn of the failure at once, unless another
    /// transaction is writing and will start the next.
    private func giveUpStart() -> [Waiter] {
        state.withLock { state in
            state.nextStarted = false
            return state.writing ? [] : takeWaiting(&state)
        }
    }

    /// Waits until no other transaction is writing, then takes the batch; nil when `turn`'s transaction was given
    /// up before or while it waited.
    private func waitForTurn(_ turn: Turn<Waiter>) async -> [Waiter]? {
        await withCheckedContinuation { continuation in
            let (now, batch) = state.withLock { state -> (Bool, [Waiter]?) in
                if turn.isAbandoned { return (true, nil) }
                guard state.writing else { return (true, takeBatch(&state)) }
                state.nextInLine = (ObjectIdentifier(turn), continuation)
                return (false, nil)
            }
            if now { continuation.resume(returning: batch) }
        }
    }

    /// A transaction given up while in line for the turn leaves the line (its body learns it from nil).
    private func leaveLine(_ turn: Turn<Waiter>) {
        let inLine = state.withLock { state -> CheckedContinuation<[Waiter]?, Never>? in
            guard let inLine = state.nextInLine, inLine.turn == ObjectIdentifier(turn) else { return nil }
            state.nextInLine = nil
            return inLine.continuation
        }
        inLine?.resume(returning: nil)
    }

    /// A batch handed to a transaction that was given up goes back to the front of the line, and the turn on.
    private func requeue(_ batch: [Waiter]) {
        state.withLock { $0.waiting.insert(contentsOf: batch, at: 0) }
        passTurn()
    }

    /// Gives the turn to the transaction in line, with everything that waited meanwhile as its
    /// batch; with none in line, frees the turn and starts one if callers wait.
    private func passTurn() {
        let next = state.withLock { state -> NextTurn in
            if let inLine = state.nextInLine {
                state.nextInLine = nil
                return .handOver(inLine.continuation, takeBatch(&state))
            }
            state.writing = false
            return startNextIfNeeded(&state) ? .start : .none
        }
        switch next {
        case .handOver(let inLine, let batch): inLine.resume(returning: batch)
        case .start: startTransaction()
        case .none: break
        }
    }
}

/// One transaction's batch and where it stands with the turn; shared between the transaction's body and its error
/// path (which may run while the body is still running, when the deadline passed), so that exactly one of them
/// passes the turn on and answers the batch.
private final class Turn<Waiter: Sendable>: Sendable {
    private enum Phase { case waiting, took, passed, abandoned }
    private let state = Mutex<(phase: Phase, batch: [Waiter])>((.waiting, []))

    /// The body takes the turn with `batch`; false when the transaction was already given up.
    func take(_ batch: [Waiter]) -> Bool {
        state.withLock { state in
            guard state.phase == .waiting else { return false }
            state = (.took, batch)
            return true
        }
    }

    var batch: [Waiter] { state.withLock { $0.batch } }
    var isAbandoned: Bool { state.withLock { $0.phase == .abandoned } }

    /// The body wrote its batch and passes the turn on; false when the error path took over.
    func pass() -> Bool {
        state.withLock { state in
            guard state.phase == .took else { return false }
            state.phase = .passed
            return true
        }
    }

    /// The error path gives the transaction up: what it held (its batch, and whether it still holds the turn), or
    /// nil when it had taken no batch.
    func abandon() -> (batch: [Waiter], holdsTurn: Bool)? {
        state.withLock { state in
            defer { state.phase = .abandoned }
            switch state.phase {
            case .waiting, .abandoned: return nil
            case .took: return (state.batch, true)
            case .passed: return (state.batch, false)
            }
        }
    }
}

/// A flush returned a different number of outputs than it was given items (a programming error).
struct CommitBatcherMismatch: Error {}
