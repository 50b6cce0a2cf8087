import Foundation
import Logging
import PostgresNIO

/// `reclaim.reconciliation_runs`: each run is recorded when it starts and updated as pages arrive, so a run
/// whose process died shows how far it got (finished_at NULL).
public enum ReconciliationRunStore {
    public struct Counts: Sendable, Equatable {
        public var pages = 0
        public var found = 0
        public var new = 0
        public var refused = 0

        public init(pages: Int = 0, found: Int = 0, new: Int = 0, refused: Int = 0) {
            self.pages = pages
            self.found = found
            self.new = new
            self.refused = refused
        }
    }

    /// Records the start of a run; returns its id.
    public static func start(
        bundleId: String,
        environment: String,
        startedBy: String,
        window: ClosedRange<Date>,
        onlyFailures: Bool,
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> Int64 {
        let rows = try await connection.query(
            """
            INSERT INTO reclaim.reconciliation_runs (bundle_id, environment, started_by, window_start, window_end, only_failures)
            VALUES (\(bundleId), \(environment), \(startedBy), \(window.lowerBound), \(window.upperBound), \(onlyFailures))
            RETURNING id
            """,
            logger: logger
        )
        for try await id in rows.decode(Int64.self) { return id }
        throw PostgresRowMissing(what: "INSERT INTO reclaim.reconciliation_runs")
    }

    /// Whether no run by `startedBy` began within the last `interval` (none at all: due). The periodic reconciliation
    /// asks this under its advisory lock, so a worker started right after another ran waits for the interval.
    public static func isDue(startedBy: String, interval: Duration, connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let seconds = Double(interval.components.seconds)
        let rows = try await connection.query(
            """
            SELECT coalesce(max(started_at) < now() - make_interval(secs => \(seconds)), true)
            FROM reclaim.reconciliation_runs WHERE started_by = \(startedBy)
            """,
            logger: logger
        )
        for try await due in rows.decode(Bool.self) { return due }
        return true
    }

    public static func progress(_ id: Int64, _ counts: Counts, connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            UPDATE reclaim.reconciliation_runs
            SET pages = \(counts.pages), found = \(counts.found), new = \(counts.new), refused = \(counts.refused)
            WHERE id = \(id)
            """,
            logger: logger
        )
    }

    public static func finish(_ id: Int64, _ counts: Counts, error: String?, connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            UPDATE reclaim.reconciliation_runs
            SET pages = \(counts.pages), found = \(counts.found), new = \(counts.new), refused = \(counts.refused),
                error = \(error), finished_at = now()
            WHERE id = \(id)
            """,
            logger: logger
        )
    }
}
