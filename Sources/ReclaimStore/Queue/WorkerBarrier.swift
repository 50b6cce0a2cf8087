import Logging
import PostgresNIO

/// A transaction-level advisory lock that every job transaction of the worker pool shares
/// (``JobQueue/markCompleted(_:worker:connection:logger:)``, its first statement) and that an operator's action takes
/// exclusively when a batch already under way must not undo it:
///
/// - `reclaim subscribers forget`: a notification read while the erasure ran used to wait on the subscription's row
///   lock and then, the row renamed to the pseudonym, store the subscriber again under the erased id;
/// - `reclaim campaigns withdraw`: a batch that read the campaigns before the withdrawal issued a ready offer after it,
///   which `resume` then delivered.
///
/// The paths outside the workers that store what Apple signed about a subscriber Reclaim may have no row of share it
/// too: an erasure of someone never stored has no row for them to wait on, and each would store them again after
/// looking for the erasure before it committed. They are the in-app cancel flow, Apple's cancel-sheet requests (their
/// record's insert), `reclaim backfill`'s storing transactions, and the lookup's Set App Account Token.
///
/// Taking it waits for the job transactions under way to end; the next ones wait until the action commits (its
/// length: seconds), then read what it wrote. The action takes it before it reads or locks any row, and a job
/// transaction before it locks any, so neither waits on the other while holding what the other needs.
public enum WorkerBarrier {
    /// The lock's key ("reclerase", from the erasure that introduced it).
    public static let key: Int64 = 0x72_65_63_6C_65_72_61_73

    /// Takes the barrier for the rest of `connection`'s transaction: no job transaction runs until it ends.
    public static func hold(connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("SELECT pg_advisory_xact_lock(\(key))", logger: logger)
    }

    /// Shares the barrier for the rest of `connection`'s transaction, as a job transaction does (a path outside the
    /// workers, above). Taken before any row is locked; it waits while an erasure or a withdrawal is under way, and
    /// the transaction's later statements read what that wrote.
    public static func share(connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("SELECT pg_advisory_xact_lock_shared(\(key))", logger: logger)
    }

    /// ``share(connection:logger:)`` without the wait: false, holding nothing, while an erasure or a withdrawal is under
    /// way. For work that may as well be left to the next request rather than hold a connection until the action ends.
    public static func tryShare(connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let rows = try await connection.query("SELECT pg_try_advisory_xact_lock_shared(\(key))", logger: logger)
        for try await taken in rows.decode(Bool.self) { return taken }
        return false
    }

    /// The condition a job transaction's first statement waits on (a one-time filter, evaluated before any row).
    static let shared = "(SELECT pg_advisory_xact_lock_shared(\(key))) IS NOT NULL"
}
