import Foundation
import PostgresNIO
import ReclaimService
import ReclaimStore
import Testing

@Suite("The dashboard views on the real corpus processed through the campaigns")
struct DashboardViewTests {
    let logger = TestPostgres.logger

    func scalar(_ client: Database, _ sql: String) async throws -> Int64 {
        Int64(try await firstInt(client, sql) ?? 0)
    }

    @Test("each view's numbers are the corpus's")
    func views() async throws {
        let setup = try CampaignTestSetup()
        defer { setup.remove() }
        try await withProcessedCorpus(setup) { client, _ in
            // 116 notifications: 81 DID_RENEW, 10 DID_CHANGE_RENEWAL_PREF, 9 EXPIRED/VOLUNTARY, 8 SUBSCRIBED, 6 TEST, 2 AUTO_RENEW_DISABLED.
            #expect(try await scalar(client, "SELECT sum(notifications)::bigint FROM reclaim.notifications_daily") == 116)
            #expect(
                try await scalar(client, "SELECT sum(notifications)::bigint FROM reclaim.notifications_daily WHERE notification_type = 'DID_RENEW'")
                    == 81
            )
            #expect(try await scalar(client, "SELECT sum(expirations)::bigint FROM reclaim.churn_reasons_daily WHERE reason = 'VOLUNTARY'") == 9)
            // Campaigns: retention offered twice, win-back 7 times and skipped twice; 8 offers withdrawn on resubscription.
            for (column, expected) in [("decided", 11), ("offered", 9), ("skipped", 2), ("held_out", 0), ("withdrawn", 8), ("redeemed", 0)] {
                let total = try await scalar(client, "SELECT sum(\(column))::bigint FROM reclaim.offer_funnel_daily")
                #expect(total == Int64(expected), "\(column)")
            }
            #expect(
                try await scalar(client, "SELECT sum(offered)::bigint FROM reclaim.offer_funnel_daily WHERE campaign_id = 'winback-expired'") == 7
            )
            // One subscriber, treated by both campaigns, none held out; it expired, so not retained.
            #expect(try await scalar(client, "SELECT sum(treated)::bigint FROM reclaim.campaign_lift") == 2)
            #expect(
                try await scalar(client, "SELECT sum(held_out + treated_redeemed + held_out_retained_30d)::bigint FROM reclaim.campaign_lift") == 0
            )
            #expect(try await scalar(client, "SELECT sum(subscribers)::bigint FROM reclaim.subscriber_status WHERE status = 'expired'") == 1)
            #expect(try await scalar(client, "SELECT count(*)::bigint FROM reclaim.dead_jobs") == 0)
            #expect(try await scalar(client, "SELECT count(*)::bigint FROM reclaim.offer_revenue_daily") == 0)
            #expect(try await scalar(client, "SELECT count(*)::bigint FROM reclaim.rejected_inputs_daily") == 0)
        }
    }

    @Test("every query in docs/dashboards.md runs against the views")
    func documentedQueries() async throws {
        let text = try String(contentsOf: Binaries.repositoryRoot.appendingPathComponent("docs/dashboards.md"), encoding: .utf8)
        let queries = text.components(separatedBy: "```sql").dropFirst().map { $0.components(separatedBy: "```")[0] }
            .flatMap { $0.split(separator: ";").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } }
            .filter { !$0.isEmpty }
        #expect(queries.count >= 10)
        let setup = try CampaignTestSetup()
        defer { setup.remove() }
        try await withProcessedCorpus(setup) { client, _ in
            for query in queries {
                do {
                    for try await _ in try await client.query(PostgresQuery(unsafeSQL: query), logger: logger) {}
                } catch {
                    Issue.record("docs/dashboards.md: \(query.prefix(80))…: \(String(reflecting: error))")
                }
            }
        }
    }
}
