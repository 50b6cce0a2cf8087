import Synchronization

/// One caller waiting for the first of several answers (the work's result, its deadline, its cancellation);
/// the answers after the first are dropped. The first may come before the caller waits: it is kept until then.
final class FirstAnswer<Value: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Value, any Error>?
        var answer: Result<Value, any Error>?
        var afterwards: (@Sendable () -> Void)?
    }
    private let state = Mutex(State())

    var isAnswered: Bool { state.withLock { $0.answer != nil } }

    func wait(_ continuation: CheckedContinuation<Value, any Error>) {
        let answer = state.withLock { state in
            if state.answer == nil { state.continuation = continuation }
            return state.answer
        }
        if let answer { continuation.resume(with: answer) }
    }

    func give(_ answer: Result<Value, any Error>) {
        let (continuation, afterwards) = state.withLock { state -> (CheckedContinuation<Value, any Error>?, (@Sendable () -> Void)?) in
            guard state.answer == nil else { return (nil, nil) }
            state.answer = answer
            defer { (state.continuation, state.afterwards) = (nil, nil) }
            return (state.continuation, state.afterwards)
        }
        continuation?.resume(with: answer)
        afterwards?()
    }

    /// Runs `action` once the answer is given (at once if it was).
    func onAnswer(_ action: @escaping @Sendable () -> Void) {
        let now = state.withLock { state in
            if state.answer != nil { return true }
            state.afterwards = action
            return false
        }
        if now { action() }
    }
}
