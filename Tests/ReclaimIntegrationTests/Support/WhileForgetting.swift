import Foundation
import ReclaimStore
import Synchronization

/// Runs `work` while `lookup`'s erasure is under way: forgotten in a transaction that commits only once `work` waits
/// on a lock (the erasure's) or has returned. Whatever `work` stored must then not name the subscriber: a path that
/// looked for the erasure before it committed, and had no row of the subscriber to wait on, stored them again.
func whileForgetting<T: Sendable>(
    _ lookup: SubscriberLookup,
    client: Database,
    _ work: @escaping @Sendable () async throws -> T
) async throws -> T {
    let returned = Returned()
    let waiting = """
        SELECT count(*)::int FROM pg_stat_activity
        WHERE wait_event_type = 'Lock' AND datname = current_database() AND pid <> pg_backend_pid()
        """
    let task = try await client.transaction(logger: TestPostgres.logger) { connection in
        _ = try await SubscriberErasure.forget(lookup, connection: connection, logger: TestPostgres.logger)
        let task = Task {
            defer { returned.value.store(true, ordering: .relaxed) }
            return try await work()
        }
        try await eventually("the work waits on the erasure, or has returned", timeout: .seconds(30)) {
            if returned.value.load(ordering: .relaxed) { return true }
            return try await firstInt(client, waiting) ?? 0 >= 1
        }
        return task
    }
    return try await task.value
}

private final class Returned: Sendable { let value = Atomic(false) }
