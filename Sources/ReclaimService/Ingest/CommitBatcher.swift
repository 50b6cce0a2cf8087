import Logging
import PostgresNIO
import ReclaimStore
import ServiceLifecycle
import Synchronization

/// Group commit: concurrent callers' writes are committed together in one transaction, and each
/// caller is answered only after that transaction's COMMIT.
///
/// fsync is the ceiling of durable single-row transactions; sharing one commit among the requests
/// that arrived while the previous commit was flushing raises throughput without adding latency
/// when idle (a lone request is flushed at once). `flushers` transactions run at a time.
public final class CommitBatcher<Item: Sendable, Output: Sendable>: Service, Sendable {
    public typealias Flush = @Sendable ([Item], PostgresConnection, Logger) async throws -> [Output]

    private struct Pending {
        var items: [(Item, CheckedContinuation<Output, any Error>)] = []
        var stopped = false
    }

    private let postgres: PostgresClient
    private let maxBatch: Int
    private let flushers: Int
    private let flush: Flush
    private let logger: Logger
    private let state = Mutex(Pending())
    private let signal = WakeUpSignal()

    public init(postgres: PostgresClient, maxBatch: Int = 256, flushers: Int = 4, logger: Logger, flush: @escaping Flush) {
        self.postgres = postgres
        self.maxBatch = maxBatch
        self.flushers = flushers
        self.flush = flush
        self.logger = logger
    }

    /// Queues `item` for the next commit and returns its output once that commit succeeded.
    public func submit(_ item: Item) async throws -> Output {
        try await withCheckedThrowingContinuation { continuation in
            let accepted = state.withLock { state -> Bool in
                guard !state.stopped else { return false }
                state.items.append((item, continuation))
                return true
            }
            if accepted {
                signal.wakeAll()
            } else {
                continuation.resume(throwing: CommitBatcherStopped())
            }
        }
    }

    public func run() async throws {
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<flushers {
                    group.addTask { await self.flushLoop() }
                }
            }
        } onGracefulShutdown: {
            // Requests already queued are still committed; new ones are refused (503, so Apple retries).
            self.state.withLock { $0.stopped = true }
            self.signal.wakeAll()
        }
    }

    private func flushLoop() async {
        while true {
            let generation = signal.generation
            let batch = state.withLock { state -> [(Item, CheckedContinuation<Output, any Error>)] in
                let count = min(state.items.count, maxBatch)
                defer { state.items.removeFirst(count) }
                return Array(state.items.prefix(count))
            }
            if batch.isEmpty {
                if state.withLock({ $0.stopped }) { return }
                await signal.wait(after: generation, timeout: .seconds(1))
                continue
            }
            do {
                let items = batch.map(\.0)
                let outputs = try await postgres.transaction(logger: logger) { connection in
                    let outputs = try await flush(items, connection, logger)
                    // Checked before COMMIT: every caller must get an answer for what was committed.
                    guard outputs.count == items.count else { throw CommitBatcherMismatch() }
                    return outputs
                }
                for (entry, output) in zip(batch, outputs) { entry.1.resume(returning: output) }
            } catch {
                for entry in batch { entry.1.resume(throwing: error) }
            }
        }
    }
}

/// Submitted after shutdown began.
public struct CommitBatcherStopped: Error {}

/// A flush returned a different number of outputs than it was given items (a programming error).
struct CommitBatcherMismatch: Error {}
