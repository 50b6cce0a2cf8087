import Logging
import PostgresNIO

/// `reclaim prune`: deletes what has outlived its use, in batches, one short transaction per batch, so it
/// runs beside live traffic without long locks or a burst of WAL.
///
/// What is kept regardless of age: dead jobs (an operator must look at them), jobs not yet completed, and
/// every notification that a campaign decision, an offer or a redemption refers to (the funnels' history).
public enum Pruning {
    /// Age limits, in seconds; nil leaves that table alone.
    public struct Policy: Sendable, Equatable {
        public var notifications: Int64?
        public var completedJobs: Int64?
        public var rejectedInputs: Int64?

        public init(notifications: Int64?, completedJobs: Int64?, rejectedInputs: Int64?) {
            self.notifications = notifications
            self.completedJobs = completedJobs
            self.rejectedInputs = rejectedInputs
        }
    }

    /// Rows deleted (or, in a dry run, that would be) per table.
    public struct Counts: Sendable, Equatable {
        public var completedJobs = 0
        public var rejectedInputs = 0
        public var notifications = 0

        public init(completedJobs: Int = 0, rejectedInputs: Int = 0, notifications: Int = 0) {
            self.completedJobs = completedJobs
            self.rejectedInputs = rejectedInputs
            self.notifications = notifications
        }
    }

    /// Jobs first: a notification is pruned only once no job refers to it.
    public static func run(_ policy: Policy, batchSize: Int, dryRun: Bool, postgres: Database, logger: Logger) async throws -> Counts {
        precondition(batchSize > 0)
        var counts = Counts()
        if let age = policy.completedJobs {
            counts.completedJobs = try await prune(
                table: "reclaim.jobs",
                key: "id",
                candidates: "state = 'completed' AND completed_at < now() - make_interval(secs => \(age))",
                batchSize: batchSize,
                dryRun: dryRun,
                postgres: postgres,
                logger: logger
            )
        }
        if let age = policy.rejectedInputs {
            counts.rejectedInputs = try await prune(
                table: "reclaim.rejected_inputs",
                key: "id",
                candidates: "received_at < now() - make_interval(secs => \(age))",
                batchSize: batchSize,
                dryRun: dryRun,
                postgres: postgres,
                logger: logger
            )
        }
        if let age = policy.notifications {
            counts.notifications = try await prune(
                table: "reclaim.notifications",
                key: "notification_uuid",
                candidates: """
                    received_at < now() - make_interval(secs => \(age))
                    AND NOT EXISTS (SELECT 1 FROM reclaim.jobs j WHERE j.notification_uuid = t.notification_uuid)
                    AND NOT EXISTS (SELECT 1 FROM reclaim.campaign_decisions d WHERE d.notification_uuid = t.notification_uuid)
                    AND NOT EXISTS (SELECT 1 FROM reclaim.offers o WHERE o.source_notification_uuid = t.notification_uuid)
                    AND NOT EXISTS (SELECT 1 FROM reclaim.offer_redemptions r WHERE r.notification_uuid = t.notification_uuid)
                    """,
                batchSize: batchSize,
                dryRun: dryRun,
                postgres: postgres,
                logger: logger
            )
        }
        return counts
    }

    /// Deletes `candidates` of `table` (aliased `t`) `batchSize` rows at a time; SKIP LOCKED leaves rows a
    /// worker holds to the next run. The conditions are fixed strings of this file, never user input.
    private static func prune(
        table: String,
        key: String,
        candidates: String,
        batchSize: Int,
        dryRun: Bool,
        postgres: Database,
        logger: Logger
    ) async throws -> Int {
        if dryRun {
            let rows = try await postgres.query(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(table) t WHERE \(candidates)"), logger: logger)
            for try await count in rows.decode(Int.self) { return count }
            return 0
        }
        let statement = """
            DELETE FROM \(table) WHERE \(key) IN (
                SELECT t.\(key) FROM \(table) t WHERE \(candidates) LIMIT \(batchSize) FOR UPDATE SKIP LOCKED)
            RETURNING 1
            """
        var total = 0
        while true {
            var deleted = 0
            for try await _ in try await postgres.query(PostgresQuery(unsafeSQL: statement), logger: logger) { deleted += 1 }
            total += deleted
            logger.debug("pruned a batch", metadata: ["table": "\(table)", "rows": "\(deleted)"])
            if deleted < batchSize { return total }
        }
    }
}
