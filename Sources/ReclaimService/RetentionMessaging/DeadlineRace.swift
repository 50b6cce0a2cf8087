import Synchronization

/// One answer against its deadline: the body's value, or ``Outcome/expired`` at the deadline, whichever comes first,
/// with a point of no return in between.
///
/// Once the body ``commit()``s (its answer is recorded as given), the deadline can no longer answer instead: the
/// body's value leaves, a moment late at worst, and the record stays true. Before that, the deadline answers and the
/// body, cancelled, learns from a refused ``commit()`` that its answer never left. `within(_:_:)` has no such point:
/// an answer recorded as given could lose to the timer, and Apple got `{}` where the record said otherwise.
///
/// The body runs in a task of its own and is not waited for: a PostgresNIO query on a stalled server ignores
/// cancellation, and the deadline must hold all the same.
final class DeadlineRace<Value: Sendable>: Sendable {
    enum Outcome: Sendable {
        case finished(Value)
        case expired
    }

    private enum Phase {
        case open
        case committed
        case answered
    }

    private struct State {
        var phase = Phase.open
        var continuation: CheckedContinuation<Outcome, Never>?
        var timer: Task<Void, Never>?
        var work: Task<Void, Never>?
    }

    private let state = Mutex(State())

    /// Runs `body` against `deadline`.
    static func run(until deadline: ContinuousClock.Instant, _ body: @escaping @Sendable (DeadlineRace) async -> Value) async -> Outcome {
        let race = DeadlineRace()
        return await withCheckedContinuation { continuation in
            race.state.withLock { $0.continuation = continuation }
            let work = Task { race.answer(.finished(await body(race))) }
            let timer = Task {
                try? await Task.sleep(until: deadline, clock: .continuous)
                if !Task.isCancelled { race.expire() }
            }
            let finished = race.state.withLock { state -> Bool in
                state.work = work
                state.timer = timer
                return state.phase == .answered
            }
            if finished { timer.cancel() }
        }
    }

    /// The body's point of no return: true when its value will be the answer; false when the deadline already
    /// answered (the body must then undo what says otherwise).
    func commit() -> Bool {
        state.withLock { state in
            switch state.phase {
            case .open:
                state.phase = .committed
                return true
            case .committed: return true
            case .answered: return false
            }
        }
    }

    private func expire() {
        let (continuation, work) = state.withLock { state -> (CheckedContinuation<Outcome, Never>?, Task<Void, Never>?) in
            guard state.phase == .open else { return (nil, nil) }
            state.phase = .answered
            defer { state.continuation = nil }
            return (state.continuation, state.work)
        }
        work?.cancel()
        continuation?.resume(returning: .expired)
    }

    private func answer(_ outcome: Outcome) {
        let (continuation, timer) = state.withLock { state -> (CheckedContinuation<Outcome, Never>?, Task<Void, Never>?) in
            guard state.phase != .answered else { return (nil, nil) }
            state.phase = .answered
            defer { state.continuation = nil }
            return (state.continuation, state.timer)
        }
        timer?.cancel()
        continuation?.resume(returning: outcome)
    }
}
