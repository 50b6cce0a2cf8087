import Synchronization

/// The graceful-shutdown flag lanes check between batches.
final class Stopping: Sendable {
    private let state = Mutex<(stopping: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    var isStopping: Bool { state.withLock { $0.stopping } }

    func stop() {
        let waiters = state.withLock { state in
            state.stopping = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once `stop` was called (or at once if it was).
    func wait() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state in
                if state.stopping { return true }
                state.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }
}
