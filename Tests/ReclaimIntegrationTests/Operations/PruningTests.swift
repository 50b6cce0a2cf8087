import Foundation
import PostgresNIO
import ReclaimService
import ReclaimStore
import ReclaimTestSupport
import Testing

@Suite("reclaim prune", .poolWatchdog)
struct PruningTests {
    let logger = TestPostgres.logger

    @Test("deletes old completed jobs, refusal records and unreferenced notifications; keeps dead jobs and the funnels' history")
    func prune() async throws {
        let setup = try CampaignTestSetup()
        defer { setup.remove() }
        try await withProcessedCorpus(setup) { client, _ in
            // The corpus was received a year ago; one job died; two refusals are old, one is new.
            try await client.query("UPDATE reclaim.notifications SET received_at = now() - interval '365 days'", logger: logger)
            try await client.query("UPDATE reclaim.jobs SET completed_at = now() - interval '30 days'", logger: logger)
            let deadJob = try #require(try await firstInt(client, "SELECT min(id) FROM reclaim.jobs"))
            try await client.query(
                "UPDATE reclaim.jobs SET state = 'dead', completed_at = NULL, last_error = 'test' WHERE id = \(deadJob)",
                logger: logger
            )
            try await client.query(
                """
                INSERT INTO reclaim.rejected_inputs (received_at, endpoint, problem, reason, body_sha256, body_size)
                VALUES (now() - interval '60 days', '/v1/apple/notifications', 'invalid-signature', 'old', '\\x00', 1),
                       (now() - interval '45 days', '/v1/apple/notifications', 'malformed-body', 'old', '\\x00', 1),
                       (now(), '/v1/apple/notifications', 'malformed-body', 'new', '\\x00', 1)
                """,
                logger: logger
            )
            let lift = try await Self.rows(client, "SELECT * FROM reclaim.campaign_lift ORDER BY campaign_id")
            let funnel = try await Self.rows(client, "SELECT * FROM reclaim.offer_funnel_daily ORDER BY 1, 2, 3")
            // What nothing else refers to, counted another way than Pruning's NOT EXISTS.
            let referenced = try #require(
                try await firstInt(
                    client,
                    """
                    SELECT count(DISTINCT u) FROM (
                        SELECT notification_uuid u FROM reclaim.campaign_decisions
                        UNION ALL SELECT source_notification_uuid FROM reclaim.offers WHERE source_notification_uuid IS NOT NULL
                        UNION ALL SELECT notification_uuid FROM reclaim.offer_redemptions
                        UNION ALL SELECT notification_uuid FROM reclaim.jobs WHERE state = 'dead') s
                    """
                )
            )
            #expect(referenced > 0 && referenced < 116)
            let policy = Pruning.Policy(notifications: 180 * 86_400, completedJobs: 7 * 86_400, rejectedInputs: 30 * 86_400)

            let dry = try await Pruning.run(policy, batchSize: 10, dryRun: true, postgres: client, logger: logger)
            #expect(dry == Pruning.Counts(completedJobs: 115, rejectedInputs: 2, notifications: 0))
            #expect(try await firstInt(client, "SELECT count(*) FROM reclaim.notifications") == 116)

            // Batches of 10: many transactions, the same result as one.
            let counts = try await Pruning.run(policy, batchSize: 10, dryRun: false, postgres: client, logger: logger)
            #expect(counts == Pruning.Counts(completedJobs: 115, rejectedInputs: 2, notifications: 116 - referenced))
            #expect(try await firstInt(client, "SELECT count(*) FROM reclaim.notifications") == referenced)
            #expect(try await firstInt(client, "SELECT count(*) FROM reclaim.jobs WHERE state = 'dead'") == 1)
            #expect(try await firstInt(client, "SELECT count(*) FROM reclaim.rejected_inputs") == 1)
            // Decisions, offers and redemptions refer to what was kept: the funnels read the same.
            #expect(try await Self.rows(client, "SELECT * FROM reclaim.campaign_lift ORDER BY campaign_id") == lift)
            #expect(try await Self.rows(client, "SELECT * FROM reclaim.offer_funnel_daily ORDER BY 1, 2, 3") == funnel)

            let again = try await Pruning.run(policy, batchSize: 10, dryRun: false, postgres: client, logger: logger)
            #expect(again == Pruning.Counts())
        }
    }

    @Test("nothing younger than the limits is touched")
    func young() async throws {
        let setup = try CampaignTestSetup()
        defer { setup.remove() }
        try await withProcessedCorpus(setup) { client, _ in
            let policy = Pruning.Policy(notifications: 3600, completedJobs: 3600, rejectedInputs: 3600)
            let counts = try await Pruning.run(policy, batchSize: 5000, dryRun: false, postgres: client, logger: logger)
            #expect(counts == Pruning.Counts())
            let left = try await firstInt(client, "SELECT count(*) FROM reclaim.notifications")
            #expect(left == 116)
        }
    }

    /// Every row as text, to compare a view before and after.
    static func rows(_ client: Database, _ sql: String) async throws -> [String] {
        var rows: [String] = []
        let query = PostgresQuery(unsafeSQL: "SELECT row_to_json(v)::text FROM (\(sql)) v")
        for try await row in try await client.query(query, logger: TestPostgres.logger).decode(String.self) { rows.append(row) }
        return rows
    }
}
