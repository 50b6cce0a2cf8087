import Logging
import Metrics
import ReclaimStore
import Synchronization

/// Records refused inputs off the request path: a refusal is appended to a bounded buffer and the request is
/// answered at once; one background flush at a time writes the buffer in batches. When junk arrives faster than
/// the database takes it, the surplus is dropped and counted (`reclaim_rejections_dropped_total`), so a flood of
/// forged requests costs the database at most one connection and never delays real notifications.
public final class RejectionRecorder: Sendable {
    private struct State {
        var buffer: [RejectedInputStore.Rejection] = []
        var flushing = false
    }

    private let postgres: Database
    /// Rows of `reclaim.rejected_inputs` kept (`server.rejectedInputsKept`).
    private let keep: Int
    private let capacity: Int
    private let batchSize: Int
    private let logger: Logger
    private let state = Mutex(State())
    private let dropped = Counter(label: "reclaim_rejections_dropped_total")

    public init(postgres: Database, keep: Int, capacity: Int = 1000, batchSize: Int = 200, logger: Logger) {
        self.postgres = postgres
        self.keep = keep
        self.capacity = capacity
        self.batchSize = batchSize
        self.logger = logger
    }

    /// Queues a refusal for storage; never waits.
    public func record(_ rejection: RejectedInputStore.Rejection) {
        let startFlush = state.withLock { state -> Bool? in
            guard state.buffer.count < capacity else { return nil }
            state.buffer.append(rejection)
            if state.flushing { return false }
            state.flushing = true
            return true
        }
        switch startFlush {
        case nil: dropped.increment()
        case true?: Task { await flush() }
        case false?: break
        }
    }

    /// Refusals waiting to be written (for tests).
    public var pending: Int { state.withLock { $0.buffer.count } }

    private func flush() async {
        while true {
            let batch = state.withLock { state -> [RejectedInputStore.Rejection] in
                let batch = Array(state.buffer.prefix(batchSize))
                state.buffer.removeFirst(batch.count)
                if batch.isEmpty { state.flushing = false }
                return batch
            }
            if batch.isEmpty { return }
            do {
                try await postgres.withConnection(logger: logger) { [keep, logger] in
                    try await RejectedInputStore.record(batch, keep: keep, connection: $0, logger: logger)
                }
            } catch {
                // Forensics are best effort: a database outage must not turn a 4xx into a 503 or grow memory.
                dropped.increment(by: batch.count)
                logger.warning("could not record refused inputs", metadata: ["count": "\(batch.count)", "error": "\(String(reflecting: error))"])
            }
        }
    }
}
