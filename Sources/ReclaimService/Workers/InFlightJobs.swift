import Synchronization

/// The jobs whose handlers are running in this process right now: the only jobs the heartbeat may keep leased.
///
/// A job whose transaction failed while its failure could not be recorded either (the database was restarting)
/// leaves this set with its handler, so its lease runs out and the queue's rescue returns it, instead of a
/// heartbeat extending the lease of work nobody is doing.
final class InFlightJobs: Sendable {
    private let ids = Mutex(Set<Int64>())

    func insert(_ jobs: [Int64]) { ids.withLock { $0.formUnion(jobs) } }

    func remove(_ jobs: [Int64]) { ids.withLock { $0.subtract(jobs) } }

    var current: [Int64] { ids.withLock { Array($0) } }

    /// A claim failed on this side, and PostgreSQL may have committed it: jobs marked this worker's that no lane
    /// holds. The next claim first returns them (``JobQueue/releaseUnheld(worker:holding:target:logger:)``).
    let claimLost = Atomic(false)
}
