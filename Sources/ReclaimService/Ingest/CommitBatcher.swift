import Logging
import PostgresNIO
import ReclaimStore
import Synchronization

/// Group commit: concurrent callers' writes are committed together in one transaction, and each
/// caller is answered only after that transaction's COMMIT.
///
/// fsync is the ceiling of durable single-row transactions; sharing one commit among the requests
/// that arrived while the previous commit was flushing raises throughput without adding latency
/// when idle: a lone request starts a flusher at once. At most `flushers` transactions run at a
/// time; a flusher ends as soon as nothing is waiting, so there is no background service to run.
public final class CommitBatcher<Item: Sendable, Output: Sendable>: Sendable {
    public typealias Flush = @Sendable ([Item], PostgresConnection, Logger) async throws -> [Output]
    private typealias Waiter = (item: Item, continuation: CheckedContinuation<Output, any Error>)

    private struct State {
        var waiting: [Waiter] = []
        var runningFlushers = 0
    }

    private let postgres: PostgresClient
    private let maxBatch: Int
    private let flushers: Int
    private let flush: Flush
    private let logger: Logger
    private let state = Mutex(State())

    /// Longest a commit may take before its callers are told it failed. Safe either way: an
    /// answer of failure for a commit that did land only causes a retry, which finds the row stored.
    private let timeout: Duration

    public init(
        postgres: PostgresClient,
        maxBatch: Int = 256,
        flushers: Int = 4,
        timeout: Duration = .seconds(5),
        logger: Logger,
        flush: @escaping Flush
    ) {
        self.postgres = postgres
        self.timeout = timeout
        self.maxBatch = maxBatch
        self.flushers = flushers
        self.flush = flush
        self.logger = logger
    }

    /// Queues `item` for the next commit and returns its output once that commit succeeded;
    /// throws the transaction's error otherwise (nothing of the batch was committed).
    public func submit(_ item: Item) async throws -> Output {
        try await withCheckedThrowingContinuation { continuation in
            let startFlusher = state.withLock { state -> Bool in
                state.waiting.append((item, continuation))
                guard state.runningFlushers < flushers else { return false }
                state.runningFlushers += 1
                return true
            }
            if startFlusher {
                Task { await self.flushUntilEmpty() }
            }
        }
    }

    private func flushUntilEmpty() async {
        while true {
            let batch = state.withLock { state -> [Waiter] in
                let count = min(state.waiting.count, maxBatch)
                if count == 0 { state.runningFlushers -= 1 }
                defer { state.waiting.removeFirst(count) }
                return Array(state.waiting.prefix(count))
            }
            if batch.isEmpty { return }
            do {
                let items = batch.map(\.item)
                let (postgres, flush, logger) = (self.postgres, self.flush, self.logger)
                let outputs = try await withTimeout(timeout) {
                    try await postgres.transaction(logger: logger) { connection in
                        let outputs = try await flush(items, connection, logger)
                        // Checked before COMMIT: every caller must get an answer for what was committed.
                        guard outputs.count == items.count else { throw CommitBatcherMismatch() }
                        return outputs
                    }
                }
                for (waiter, output) in zip(batch, outputs) { waiter.continuation.resume(returning: output) }
            } catch {
                for waiter in batch { waiter.continuation.resume(throwing: error) }
            }
        }
    }
}

/// A flush returned a different number of outputs than it was given items (a programming error).
struct CommitBatcherMismatch: Error {}
