import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import ReclaimDomain
import ReclaimService
import ReclaimStore
import ReclaimTestSupport
import Testing

/// The worker processes a claimed batch set-based (CampaignEngine.process(batch:)): one read and one write for all
/// its subscribers, a subscriber's notifications in signedDate order, one per round. These tests hold that to
/// processing one notification at a time.
@Suite("Set-based batches: the same result as one notification at a time", .poolWatchdog)
struct SetBasedBatchTests {
    let logger = TestPostgres.logger

    /// Every row the engine writes, without what differs from run to run (ids, nonces, signatures, clock times; a
    /// skip's reason names the live offer by its random id).
    static func outcome(_ client: Database) async throws -> [String] {
        var lines: [String] = []
        for sql: PostgresQuery in [
            """
            SELECT concat_ws('|', bundle_id, environment, original_transaction_id, app_account_token, product_id, subscription_group_id,
                   status, auto_renew, auto_renew_product_id, expires_at, expiration_intent, in_billing_retry, grace_period_expires_at,
                   eligible_win_back_offer_ids::text, storefront, first_purchase_at, last_transaction_id, last_notification_type,
                   last_subtype, last_signed_date, last_notification_uuid)
            FROM reclaim.subscriptions ORDER BY 1
            """,
            """
            SELECT concat_ws('|', 'decision', campaign_id, original_transaction_id, app_account_token, notification_uuid, triggered_at,
                   outcome, regexp_replace(reason, '[0-9a-f]{8}-[0-9a-f-]{27}', '<offer id>', 'g'), variant_id)
            FROM reclaim.campaign_decisions ORDER BY 1
            """,
            """
            SELECT concat_ws('|', 'offer', o.campaign_id, o.original_transaction_id, o.app_account_token, o.source_notification_uuid,
                   o.triggered_at, o.state, o.end_reason, o.product_id, o.offer_identifier, d.notification_uuid)
            FROM reclaim.offers o LEFT JOIN reclaim.campaign_decisions d ON d.id = o.decision_id ORDER BY 1
            """,
            "SELECT concat_ws('|', 'redemption', notification_uuid, offer_id IS NOT NULL) FROM reclaim.offer_redemptions ORDER BY 1",
        ] {
            for try await line in try await client.query(sql, logger: TestPostgres.logger).decode(String.self) { lines.append(line) }
        }
        return lines
    }

    @Test(
        "the 116 real notifications as one batch, in two orders: the states, decisions, offers and redemptions of one at a time in signedDate order"
    )
    func corpusAsOneShuffledBatch() async throws {
        let setup = try CampaignTestSetup()
        defer { setup.remove() }
        let corpus = try CorpusCampaignTests.corpusInSignedDateOrder()
        let sequential = try await withTestDatabase { client, _ in
            let dependencies = try Dependencies.test(postgres: client, config: setup.config)
            try await ingestNotifications(corpus.map(\.notification.body), dependencies: dependencies)
            for snapshot in try await snapshots(of: corpus.map(\.notification), verifier: dependencies.verifier) {
                try await client.transaction(logger: logger) { connection in
                    try await dependencies.campaignEngine.process(snapshot, connection: connection, logger: logger)
                }
            }
            return try await Self.outcome(client)
        }
        #expect(sequential.contains { $0.hasPrefix("offer|") }, "the corpus makes offers: the comparison compares something")
        // Two orders unrelated to signedDate: by notification UUID, and newest first.
        for (name, shuffled) in [("by UUID", corpus.sorted { $0.notification.uuid < $1.notification.uuid }), ("newest first", corpus.reversed())] {
            let batched = try await withTestDatabase { client, _ in
                let dependencies = try Dependencies.test(postgres: client, config: setup.config)
                try await ingestNotifications(shuffled.map(\.notification.body), dependencies: dependencies)
                let batch = try await snapshots(of: shuffled.map(\.notification), verifier: dependencies.verifier)
                try await client.transaction(logger: logger) { connection in
                    try await dependencies.campaignEngine.process(batch: batch, connection: connection, logger: logger)
                }
                return try await Self.outcome(client)
            }
            let differences = Set(batched).symmetricDifference(sequential).sorted()
            #expect(batched.count == sequential.count && differences.isEmpty, "\(name): \(differences.prefix(6))")
        }
    }
}
