import Synchronization

/// Whether the process's work loops still move: each loop (a worker lane, an ingest transaction) marks the start
/// of a step and each sign of progress within it, and ends it when idle. A step with no progress for longer than
/// `bound` means the loop is wedged. Every database operation has a deadline, so only a defect gets there; then
/// `/healthz` fails, so that Kubernetes or systemd restarts the process instead of leaving it up and useless.
public final class Liveness: Sendable {
    /// Longest a step may go without progress; longer than any one database operation may take.
    public let bound: Duration
    private let steps = Mutex<[Int: Step]>([:])
    private let nextId = Atomic(0)

    struct Step {
        let what: String
        var since: ContinuousClock.Instant
    }

    /// A step that has gone without progress for longer than the bound.
    public struct Stall: Sendable, Equatable {
        public let what: String
        public let seconds: Int
    }

    public init(bound: Duration) {
        self.bound = bound
    }

    /// Starts a step of `what` (for example "worker lane"); returns its token.
    public func begin(_ what: String) -> Int {
        let id = nextId.add(1, ordering: .relaxed).newValue
        steps.withLock { $0[id] = Step(what: what, since: .now) }
        return id
    }

    /// The step moved on (an operation ended, successfully or not).
    public func progress(_ token: Int) {
        steps.withLock { $0[token]?.since = .now }
    }

    /// The step ended: its loop is idle or gone.
    public func end(_ token: Int) {
        _ = steps.withLock { $0.removeValue(forKey: token) }
    }

    /// Steps without progress for longer than the bound, the longest first.
    public func stalls(now: ContinuousClock.Instant = .now) -> [Stall] {
        steps.withLock { steps in
            steps.values.filter { now - $0.since > bound }.map { Stall(what: $0.what, seconds: Int((now - $0.since).components.seconds)) }
        }
        .sorted { $0.seconds > $1.seconds }
    }
}
