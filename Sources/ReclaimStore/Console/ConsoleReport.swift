import Foundation
import Logging
import PostgresNIO

/// What /console shows, read from the dashboard views (docs/dashboards.md) in one pass. With a bundle id every
/// section is limited to that app; refused inputs name no app Reclaim could trust, so they are read for
/// global keys only.
public struct ConsoleReport: Sendable {
    public struct TypeCount: Sendable, Equatable {
        public let type: String
        public let subtype: String
        public let count: Int
    }

    public struct QueueState: Sendable, Equatable {
        public let state: String
        public let jobs: Int
        /// Seconds the oldest waiting job has been due; nil for states that do not wait.
        public let oldestWaitingSeconds: Double?
    }

    public struct DeadJob: Sendable, Equatable {
        public let id: Int64
        public let kind: String
        public let attempts: Int
        public let lastError: String
        public let diedAt: Date
    }

    public struct Campaign: Sendable, Equatable {
        public let bundleId: String
        public let campaignId: String
        public let decided: Int
        public let heldOut: Int
        public let offered: Int
        public let delivered: Int
        public let shown: Int
        public let redeemed: Int
        public let treated: Int
        public let liftHeldOut: Int
        public let treatedRedeemed: Int
        public let treatedRetained30d: Int
        public let heldOutRetained30d: Int
    }

    public struct Rejection: Sendable, Equatable {
        public let receivedAt: Date
        public let endpoint: String
        public let problem: String
        public let reason: String
    }

    public var notifications: [TypeCount] = []
    /// Notifications received per hour, index 0 the current hour, 23 the oldest.
    public var notificationsPerHour: [Int] = Array(repeating: 0, count: 24)
    public var queue: [QueueState] = []
    public var deadJobs: [DeadJob] = []
    /// Forwarding targets and webhooks with their backlog, failing ones first.
    public var outbound: [OutboundStore.TargetStatus] = []
    public var campaigns: [Campaign] = []
    /// Each campaign variant's lift with its interval and verdict (`reclaim.campaign_variant_lift`).
    public var lifts: [LiftStatistics] = []
    /// Each cancel-sheet arm's save rate against its holdout (`reclaim.cancel_sheet_save_rates`).
    public var saveRates: [SaveRateStatistics] = []
    /// Discounted redemptions of the last 30 days per app and channel, Reclaim's apart (`reclaim.discount_channels_daily`).
    public var discountChannels: [(bundleId: String, channel: String, redemptions: Int)] = []
    /// nil when not shown (a key limited to one app).
    public var rejections: [Rejection]?
    public var rejectionsPerProblem: [(problem: String, count: Int)]?

    public init() {}

    /// The queries, in page order.
    public enum Queries {
        public static let notifications = ConsoleQuery(
            id: "sql-notifications",
            source: "reclaim.notifications",
            sql: """
                SELECT notification_type, coalesce(subtype, '') AS subtype, count(*) AS notifications
                FROM reclaim.notifications
                WHERE source = 'apple' AND received_at > now() - interval '24 hours' AND ($1::text IS NULL OR bundle_id = $1)
                GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2
                """
        )
        public static let notificationsPerHour = ConsoleQuery(
            id: "sql-notifications-per-hour",
            source: "reclaim.notifications",
            sql: """
                SELECT floor(extract(epoch FROM now() - received_at) / 3600)::int AS hours_ago, count(*) AS notifications
                FROM reclaim.notifications
                WHERE source = 'apple' AND received_at > now() - interval '24 hours' AND ($1::text IS NULL OR bundle_id = $1)
                GROUP BY 1
                """
        )
        public static let queue = ConsoleQuery(
            id: "sql-queue",
            source: "reclaim.queue_health",
            sql: """
                SELECT state, jobs, extract(epoch FROM now() - oldest_run_at)::float8 AS oldest_waiting_seconds
                FROM reclaim.queue_health ORDER BY state
                """
        )
        public static let deadJobs = ConsoleQuery(
            id: "sql-dead-jobs",
            source: "reclaim.dead_jobs",
            sql: """
                SELECT id, kind, attempts, coalesce(last_error, '') AS last_error, died_at
                FROM reclaim.dead_jobs
                WHERE $1::text IS NULL
                   OR notification_uuid IN (SELECT notification_uuid FROM reclaim.notifications WHERE bundle_id = $1)
                ORDER BY died_at DESC LIMIT 20
                """
        )
        public static let outbound = ConsoleQuery(id: "sql-outbound", source: "reclaim.outbound_targets, reclaim.jobs", sql: OutboundStore.statusSQL)
        public static let campaigns = ConsoleQuery(
            id: "sql-campaigns",
            source: "reclaim.campaign_funnel, reclaim.campaign_lift",
            sql: """
                SELECT f.bundle_id, f.campaign_id, f.decided, f.held_out, f.offered, f.delivered, f.shown, f.redeemed,
                       coalesce(l.treated, 0) AS treated, coalesce(l.held_out, 0) AS lift_held_out,
                       coalesce(l.treated_redeemed, 0) AS treated_redeemed,
                       coalesce(l.treated_retained_30d, 0) AS treated_retained_30d,
                       coalesce(l.held_out_retained_30d, 0) AS held_out_retained_30d
                FROM reclaim.campaign_funnel f
                LEFT JOIN reclaim.campaign_lift l USING (bundle_id, environment, campaign_id)
                WHERE ($1::text IS NULL OR f.bundle_id = $1) AND f.environment = $2
                ORDER BY 1, 2
                """
        )
        public static let discountChannels = ConsoleQuery(
            id: "sql-discount-channels",
            source: "reclaim.discount_channels_daily",
            sql: """
                SELECT bundle_id, channel, sum(redemptions)::bigint AS redemptions
                FROM reclaim.discount_channels_daily
                WHERE ($1::text IS NULL OR bundle_id = $1) AND environment = $2 AND day >= now() - interval '30 days'
                GROUP BY 1, 2 ORDER BY 1, 3 DESC, 2
                """
        )
        public static let rejections = ConsoleQuery(
            id: "sql-rejections",
            source: "reclaim.rejected_inputs",
            sql: "SELECT received_at, endpoint, problem, reason FROM reclaim.rejected_inputs ORDER BY id DESC LIMIT 20",
            globalOnly: true
        )
        public static let rejectionsPerProblem = ConsoleQuery(
            id: "sql-rejections-per-problem",
            source: "reclaim.rejected_inputs_daily",
            sql: """
                SELECT problem, sum(rejections)::bigint AS rejections
                FROM reclaim.rejected_inputs_daily
                WHERE day >= (now() AT TIME ZONE 'UTC')::date - 1
                GROUP BY 1 ORDER BY 2 DESC, 1
                """,
            globalOnly: true
        )
        public static let all = [
            notifications, notificationsPerHour, queue, deadJobs, outbound, campaigns, discountChannels, rejections, rejectionsPerProblem,
        ]
    }

    /// Reads every section on `connection`, in one read-only transaction: the numbers are of one moment. The
    /// campaigns' business numbers are of `environment` only (Sandbox purchases are TestFlight and testers').
    public static func load(
        bundleId: String?,
        environment: String = "Production",
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> ConsoleReport {
        try await connection.query("BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
        do {
            let report = try await read(bundleId: bundleId, environment: environment, connection: connection, logger: logger)
            try await connection.query("COMMIT", logger: logger)
            return report
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw error
        }
    }

    private static func read(bundleId: String?, environment: String, connection: PostgresConnection, logger: Logger) async throws -> ConsoleReport {
        var report = ConsoleReport()
        func query(_ q: ConsoleQuery) -> PostgresQuery {
            var bindings = PostgresBindings()
            if q.sql.contains("$1") { bindings.append(bundleId) }
            if q.sql.contains("$2") { bindings.append(environment) }
            return PostgresQuery(unsafeSQL: q.sql, binds: bindings)
        }
        for try await (type, subtype, count) in try await connection.query(query(Queries.notifications), logger: logger).decode(
            (String, String, Int).self
        ) {
            report.notifications.append(TypeCount(type: type, subtype: subtype, count: count))
        }
        for try await (hoursAgo, count) in try await connection.query(query(Queries.notificationsPerHour), logger: logger).decode((Int, Int).self)
        where (0..<24).contains(hoursAgo) {
            report.notificationsPerHour[hoursAgo] = count
        }
        for try await (state, jobs, oldest) in try await connection.query(query(Queries.queue), logger: logger).decode((String, Int, Double?).self) {
            report.queue.append(QueueState(state: state, jobs: jobs, oldestWaitingSeconds: oldest))
        }
        for try await (id, kind, attempts, error, died) in try await connection.query(query(Queries.deadJobs), logger: logger).decode(
            (Int64, String, Int, String, Date).self
        ) {
            report.deadJobs.append(DeadJob(id: id, kind: kind, attempts: attempts, lastError: error, diedAt: died))
        }
        report.outbound = try await OutboundStore.status(bundleId: bundleId, connection: connection, logger: logger)
        let campaigns = try await connection.query(query(Queries.campaigns), logger: logger)
        for try await row in campaigns {
            let c = row.makeRandomAccess()
            func int(_ index: Int) throws -> Int { try c[index].decode(Int.self) }
            report.campaigns.append(
                Campaign(
                    bundleId: try c[0].decode(String.self),
                    campaignId: try c[1].decode(String.self),
                    decided: try int(2),
                    heldOut: try int(3),
                    offered: try int(4),
                    delivered: try int(5),
                    shown: try int(6),
                    redeemed: try int(7),
                    treated: try int(8),
                    liftHeldOut: try int(9),
                    treatedRedeemed: try int(10),
                    treatedRetained30d: try int(11),
                    heldOutRetained30d: try int(12)
                )
            )
        }
        report.lifts = try await LiftStatistics.load(
            environment: environment,
            bundleId: bundleId,
            campaign: nil,
            connection: connection,
            logger: logger
        )
        report.saveRates = try await SaveRateStatistics.load(
            environment: environment,
            bundleId: bundleId,
            campaign: nil,
            connection: connection,
            logger: logger
        )
        for try await (bundle, channel, count) in try await connection.query(query(Queries.discountChannels), logger: logger).decode(
            (String, String, Int).self
        ) {
            report.discountChannels.append((bundle, channel, count))
        }
        guard bundleId == nil else { return report }
        var rejections: [Rejection] = []
        for try await (at, endpoint, problem, reason) in try await connection.query(query(Queries.rejections), logger: logger).decode(
            (Date, String, String, String).self
        ) {
            rejections.append(Rejection(receivedAt: at, endpoint: endpoint, problem: problem, reason: reason))
        }
        report.rejections = rejections
        var perProblem: [(problem: String, count: Int)] = []
        for try await (problem, count) in try await connection.query(query(Queries.rejectionsPerProblem), logger: logger).decode((String, Int).self) {
            perProblem.append((problem, count))
        }
        report.rejectionsPerProblem = perProblem
        return report
    }
}
