import Logging
import PostgresNIO
import ReclaimStore
import Synchronization

/// Wakes idle workers when PostgreSQL reports new jobs.
///
/// A waiter passes the generation it saw before it last looked for work; if a wake-up happened
/// since, `wait` returns at once, so a NOTIFY that arrives between "found nothing" and "going to
/// sleep" is never lost.
final class WakeUpSignal: Sendable {
    private struct State {
        var generation = 0
        var nextWaiter = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Mutex(State())
    /// Whether this process holds its owner lock now (``listen(on:owner:postgres:logger:)``).
    private let ownerLockHeld = Atomic(false)
    private let needsOwnerLock: Bool

    /// - Parameter needsOwnerLock: claims wait for the owner lock that `listen` takes (see there).
    init(needsOwnerLock: Bool = false) {
        self.needsOwnerLock = needsOwnerLock
    }

    /// Whether jobs may be claimed now: a claim made without the owner lock held would look like a dead worker's.
    var mayClaim: Bool { !needsOwnerLock || ownerLockHeld.load(ordering: .acquiring) }

    var generation: Int { state.withLock { $0.generation } }

    /// Wakes every waiter.
    func wakeAll() {
        let waiters = state.withLock { state in
            state.generation += 1
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns on the next wake-up after `seenGeneration`, after `timeout`, or on cancellation.
    func wait(after seenGeneration: Int, timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.waitForWakeUp(after: seenGeneration) }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }

    private func waitForWakeUp(after seenGeneration: Int) async {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state in
                    if state.generation != seenGeneration || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume()
        }
    }

    /// Keeps a LISTEN connection on `channel` open and turns its notifications into wake-ups; reconnects after
    /// failures (polling covers the gap). Returns when cancelled.
    ///
    /// With an `owner` (the worker id jobs are claimed as), the same session first takes a session-level advisory
    /// lock on it (`hashtextextended(owner, 0)`, what ``JobQueue/rescueExpired(limit:logger:)`` looks for): PostgreSQL releases it the moment the session ends, which is how
    /// the rescuer tells a killed worker's jobs from a live one's without waiting for their lease.
    func listen(on channel: String, owner: String? = nil, postgres: Database, logger: Logger) async {
        while !Task.isCancelled {
            do {
                try await postgres.withConnection(deadline: nil, logger: logger) { connection in
                    if let owner {
                        // Try, never wait: this session has no deadline. Only the rescuer takes another's lock, and
                        // for an instant; if it holds this one now, the loop below tries again in a second.
                        var taken = false
                        for try await held in try await connection.query(
                            "SELECT pg_try_advisory_lock(hashtextextended(\(owner), 0))",
                            logger: logger
                        ).decode(Bool.self) { taken = held }
                        guard taken else { throw OwnerLockBusy() }
                        self.ownerLockHeld.store(true, ordering: .releasing)
                    }
                    try await connection.listen(on: channel) { notifications in
                        self.wakeAll()  // work may have arrived while we were not listening
                        for try await _ in notifications { self.wakeAll() }
                    }
                }
            } catch {
                ownerLockHeld.store(false, ordering: .releasing)
                if Task.isCancelled { return }
                logger.warning(
                    "LISTEN connection lost; polling until it is back",
                    metadata: ["channel": "\(channel)", "error": "\(String(reflecting: error))"]
                )
            }
            ownerLockHeld.store(false, ordering: .releasing)
            try? await Task.sleep(for: .seconds(1))
        }
    }
}

/// The owner lock was held by another session at that moment (the rescuer, for an instant): try again.
struct OwnerLockBusy: Error {}
