import Foundation
import Synchronization

/// One thread that runs actions at their deadlines: the timers of every database operation and every Retention
/// Messaging answer.
///
/// A `Task.sleep` per deadline cost each of them a task, a libdispatch timer (its manager thread woken through an
/// eventfd, on arming and on firing) and, once cancelled, a wasted wake-up when the timer still fired: about a tenth of
/// the server's CPU per Retention Messaging answer in `PERF=1 scripts/bench retention`. Here arming is a heap push
/// under a lock, which wakes the thread only when the new deadline is the earliest (rare: deadlines of one kind are
/// armed in the order they fall due), and cancelling is a flag.
///
/// Actions run on the timer's thread: they must be short and never block (resume a continuation, cancel a task).
public final class DeadlineTimers: Sendable {
    public static let shared = DeadlineTimers()

    /// An armed deadline; ``cancel()`` keeps its action from running.
    public final class Timer: Sendable {
        /// Dropped on cancel, so that what it holds is freed then, not at the deadline.
        private let action: Mutex<(@Sendable () -> Void)?>

        fileprivate init(_ action: @escaping @Sendable () -> Void) { self.action = Mutex(action) }

        public func cancel() { action.withLock { $0 = nil } }

        fileprivate func fire() {
            let action = action.withLock { action in
                defer { action = nil }
                return action
            }
            action?()
        }
    }

    private struct Entry {
        let deadline: ContinuousClock.Instant
        let sequence: UInt64
        let timer: Timer

        func before(_ other: Entry) -> Bool { (deadline, sequence) < (other.deadline, other.sequence) }
    }

    private struct State {
        var heap: [Entry] = []
        var sequence: UInt64 = 0
    }

    // NSCondition is not Sendable; its use is confined to this class's lock discipline.
    private nonisolated(unsafe) let condition = NSCondition()
    private nonisolated(unsafe) var state = State()

    private init() {
        let thread = Thread { [self] in run() }
        thread.name = "reclaim-deadlines"
        thread.start()
    }

    /// Runs `action` at `deadline` unless the returned timer is cancelled first.
    @discardableResult
    public func at(_ deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> Timer {
        let timer = Timer(action)
        condition.lock()
        state.sequence &+= 1
        let entry = Entry(deadline: deadline, sequence: state.sequence, timer: timer)
        push(entry)
        let earliest = state.heap[0].sequence == entry.sequence
        condition.unlock()
        if earliest { condition.signal() }
        return timer
    }

    private func run() {
        condition.lock()
        while true {
            guard let first = state.heap.first else {
                condition.wait()
                continue
            }
            let now = ContinuousClock.now
            if first.deadline <= now {
                popFirst()
                condition.unlock()
                first.timer.fire()
                condition.lock()
                continue
            }
            let wait = first.deadline - now
            let seconds = Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18
            _ = condition.wait(until: Date().addingTimeInterval(seconds))
        }
    }

    // MARK: The binary heap, under the lock

    private func push(_ entry: Entry) {
        state.heap.append(entry)
        var child = state.heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard state.heap[child].before(state.heap[parent]) else { break }
            state.heap.swapAt(child, parent)
            child = parent
        }
    }

    private func popFirst() {
        let last = state.heap.removeLast()
        guard !state.heap.isEmpty else { return }
        state.heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < state.heap.count, state.heap[left].before(state.heap[smallest]) { smallest = left }
            if right < state.heap.count, state.heap[right].before(state.heap[smallest]) { smallest = right }
            guard smallest != parent else { return }
            state.heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
