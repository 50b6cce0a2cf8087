import Foundation
import Logging
import Metrics
import ReclaimStore
import Synchronization

/// Marks recorded cancel-sheet decisions `too_late` when their answer could not leave in time (Apple got `{}`), and
/// keeps trying until the marks land. A late answer means the database is slow or away: exactly when one attempt
/// fails, so a single fire-and-forget attempt was lost under the overload that made it necessary and left the record
/// saying `answered`.
///
/// The marks wait in one bounded set and land together: one task, one statement for all that wait
/// (``CancelSheetStore/markTooLate(_:postgres:logger:)``), retried from 50 ms to 5 s apart, one warning per failed
/// attempt (`reclaim_cancel_sheet_too_late_retries_total`). An overload makes many late answers at once, and a task
/// and a statement per mark, retried for ever, competed under it for the very pool the realtime answers use. At most
/// ``capacity`` marks wait (`reclaim_cancel_sheet_too_late_pending`); past it the oldest are dropped, said once per
/// overflow in the log and counted (`reclaim_cancel_sheet_too_late_dropped_total`): such a record keeps saying
/// `answered` where Apple showed its default. Only a process that dies with marks pending loses them too.
public final class TooLateMarks: Sendable {
    let postgres: Database
    let logger: Logger
    /// The marks that may wait at once: 10,000 is a whole minute of Apple's cancellation sheets at a rate few apps
    /// reach, all late, and 160 kB of ids.
    let capacity: Int
    static let firstRetry: Duration = .milliseconds(50)
    static let lastRetry: Duration = .seconds(5)

    private struct State {
        /// Waiting, oldest first.
        var pending: [UUID] = []
        /// The task landing them, while one runs.
        var drainer: Task<Void, Never>?
        /// Dropped since the last overflow was logged (the log line says how many once the set has room again).
        var overflowing = false
    }

    private let state = Mutex(State())
    private let pendingGauge = Gauge(label: "reclaim_cancel_sheet_too_late_pending")

    public init(postgres: Database, logger: Logger, capacity: Int = 10_000) {
        self.postgres = postgres
        self.logger = logger
        self.capacity = max(1, capacity)
        pendingGauge.record(0)
        Counter(label: "reclaim_cancel_sheet_too_late_dropped_total").increment(by: 0)
    }

    /// Adds `id` to the marks to land; returns at once (the answer `{}` must not wait). The task returned ends once
    /// no mark waits.
    @discardableResult
    public func mark(_ id: UUID) -> Task<Void, Never> {
        let (task, dropped, firstOverflow, pending) = state.withLock { state -> (Task<Void, Never>, Int, Bool, Int) in
            state.pending.append(id)
            let dropped = max(0, state.pending.count - capacity)
            if dropped > 0 { state.pending.removeFirst(dropped) }
            let firstOverflow = dropped > 0 && !state.overflowing
            if dropped > 0 { state.overflowing = true }
            if let drainer = state.drainer { return (drainer, dropped, firstOverflow, state.pending.count) }
            let drainer = Task { await self.drain() }
            state.drainer = drainer
            return (drainer, dropped, firstOverflow, state.pending.count)
        }
        pendingGauge.record(pending)
        if dropped > 0 {
            Counter(label: "reclaim_cancel_sheet_too_late_dropped_total").increment(by: dropped)
            if firstOverflow {
                logger.error(
                    "too many cancel-sheet decisions wait to be marked too_late: the oldest are dropped (their records keep saying answered)",
                    metadata: ["capacity": "\(capacity)"]
                )
            }
        }
        return task
    }

    /// The marks waiting now (for tests and the gauge).
    public var pending: Int { state.withLock { $0.pending.count } }

    /// Lands what waits, in one statement per attempt, until nothing waits.
    private func drain() async {
        var wait = Self.firstRetry
        var attempt = 1
        while true {
            let batch = state.withLock { state -> [UUID] in
                if state.pending.isEmpty {
                    state.drainer = nil
                    state.overflowing = false
                }
                return state.pending
            }
            if batch.isEmpty {
                pendingGauge.record(0)
                return
            }
            do {
                try await CancelSheetStore.markTooLate(batch, postgres: postgres, logger: logger)
                let left = state.withLock { state -> Int in
                    let landed = Set(batch)
                    state.pending.removeAll { landed.contains($0) }
                    return state.pending.count
                }
                pendingGauge.record(left)
                if attempt > 1 {
                    logger.notice("cancel-sheet decisions marked too_late", metadata: ["decisions": "\(batch.count)", "attempts": "\(attempt)"])
                }
                wait = Self.firstRetry
                attempt = 1
            } catch {
                Counter(label: "reclaim_cancel_sheet_too_late_retries_total").increment()
                logger.warning(
                    "could not mark cancel-sheet decisions too_late; trying again",
                    metadata: [
                        "decisions": "\(batch.count)", "attempt": "\(attempt)", "retryIn": "\(wait)", "error": "\(String(reflecting: error))",
                    ]
                )
                try? await Task.sleep(for: wait)
                wait = min(wait * 2, Self.lastRetry)
                attempt += 1
            }
        }
    }
}
