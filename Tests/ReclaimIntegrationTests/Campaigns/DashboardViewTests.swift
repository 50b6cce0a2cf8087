import Foundation
import PostgresNIO
import ReclaimService
import ReclaimStore
import ReclaimTestSupport
import Testing

@Suite("The dashboard views on the real corpus processed through the campaigns", .poolWatchdog)
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

    @Test("every business view carries the environment: a Sandbox purchase is never counted with Production revenue")
    func environmentsApart() async throws {
        let setup = try CampaignTestSetup()
        defer { setup.remove() }
        try await withProcessedCorpus(setup) { client, _ in
            // The corpus is Apple's sandbox: every business number is under Sandbox, none under Production.
            for view in ["campaign_funnel", "offer_funnel_daily", "campaign_lift"] {
                #expect(try await scalar(client, "SELECT count(*)::bigint FROM reclaim.\(view) WHERE environment = 'Sandbox'") > 0, "\(view)")
                #expect(try await scalar(client, "SELECT count(*)::bigint FROM reclaim.\(view) WHERE environment <> 'Sandbox'") == 0, "\(view)")
            }
            // A TestFlight purchase of the corpus's win-back offer, and one real purchase of the same offer: revenue
            // in Production is the real one alone.
            let offerId = try #require(try await OfferRow.all(client).first { $0.campaignId == "winback-expired" }?.id)
            // (A redemption row names the notification that reported it: two of the corpus's stand in.)
            var uuids: [UUID] = []
            for try await uuid in try await client.query("SELECT notification_uuid FROM reclaim.notifications LIMIT 2", logger: logger).decode(
                UUID.self
            ) {
                uuids.append(uuid)
            }
            for (uuid, environment, price) in [(uuids[0], "Sandbox", 4990), (uuids[1], "Production", 2990)] {
                try await client.query(
                    """
                    INSERT INTO reclaim.offer_redemptions (notification_uuid, bundle_id, environment, original_transaction_id,
                        transaction_id, product_id, offer_identifier, offer_id, price, currency, redeemed_at)
                    VALUES (\(uuid), 'GeniusParentingAI', \(environment), '2000000970472825', \(uuid.uuidString), 'p', 'WINBACK30',
                        \(offerId), \(Int64(price)), 'USD', now())
                    """,
                    logger: logger
                )
            }
            #expect(
                try await scalar(client, "SELECT sum(revenue_milli)::bigint FROM reclaim.offer_revenue_daily WHERE environment = 'Production'")
                    == 2990
            )
            #expect(try await scalar(client, "SELECT sum(redemptions)::bigint FROM reclaim.offer_revenue_daily WHERE environment = 'Sandbox'") == 1)
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
