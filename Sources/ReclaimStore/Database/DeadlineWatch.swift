import Metrics
import PostgresNIO
import Synchronization

/// What an operation's deadline and its body share: the connection the body got, and whether the deadline passed.
/// Expiring closes that connection, which fails the query waiting on it: PostgresNIO's queries ignore cancellation.
final class DeadlineWatch: Sendable {
    private struct State {
        var connection: PostgresConnection?
        var attachedAt: ContinuousClock.Instant?
        var timeout: DatabaseTimeout?
        var abandoned = false
        /// When the timer first saw the body's connection closed; the body is taken to be lost a look later.
        var closedSeen = false
        var lost = false
    }
    private let state = Mutex(State())

    /// Records the body's connection; false when the deadline passed first (the body must not start).
    func attach(_ connection: PostgresConnection) -> Bool {
        state.withLock { state in
            guard state.timeout == nil, !state.abandoned else { return false }
            state.connection = connection
            state.attachedAt = .now
            return true
        }
    }

    /// The body is done with its connection, which goes back to the pool: nothing may close it now. Returns whether
    /// the deadline or the caller's cancellation closed it meanwhile (the close may not have completed yet).
    @discardableResult
    func detach() -> Bool {
        state.withLock { state in
            state.connection = nil
            return state.timeout != nil || state.abandoned || state.lost
        }
    }

    /// Whether the body's connection has closed under it and stayed closed since the timer's last look without the
    /// body giving it back: PostgresNIO fails a statement under way when its connection closes, so such a body had
    /// sent one on the closed connection, which is never answered. The second look gives a failing body the time to
    /// answer with its own error.
    func closedUnderBody() -> Bool {
        state.withLock { state in
            guard let connection = state.connection, state.timeout == nil, !state.abandoned, !state.lost else { return false }
            guard connection.isClosed else {
                state.closedSeen = false
                return false
            }
            if state.closedSeen { state.lost = true }
            state.closedSeen = true
            return state.lost
        }
    }

    var attachedAt: ContinuousClock.Instant? { state.withLock { $0.attachedAt } }

    var timeout: DatabaseTimeout? { state.withLock { $0.timeout } }

    var isAbandoned: Bool { state.withLock { $0.abandoned } }

    /// The deadline passed: remember why, count it, and close the body's connection if it has one.
    func expire(_ timeout: DatabaseTimeout) {
        let connection = state.withLock { state in
            state.timeout = timeout
            return state.connection
        }
        Counter(label: "reclaim_database_timeouts_total", dimensions: [("operation", timeout.operation.rawValue)]).increment()
        connection?.close().whenComplete { _ in }
    }

    /// The caller was cancelled: close the body's connection (its query would not notice) and let no body start.
    func abandon() {
        let connection = state.withLock { state in
            state.abandoned = true
            return state.connection
        }
        connection?.close().whenComplete { _ in }
    }
}
