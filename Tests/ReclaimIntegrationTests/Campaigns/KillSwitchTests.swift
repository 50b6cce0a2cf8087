import Foundation
import Hummingbird
import HummingbirdTesting
import PostgresNIO
import ReclaimDomain
import ReclaimService
import ReclaimStore
import ReclaimTestSupport
import Testing

/// Issue 61: the kill switch stops delivery. A paused campaign's offers are handed out by no door (GET /v1/offers,
/// the lookup by signed transactions, the cancel sheet's fallback) until it resumes; `withdraw` ends them for good.
@Suite("The kill switch: pause stops delivery at once, resume brings the offers back, withdraw ends them for good", .poolWatchdog)
struct KillSwitchTests {
    let logger = TestPostgres.logger
    static let token = "00000000-0000-0000-0000-000000000051"

    struct Answer: Decodable {
        struct Offer: Decodable { let campaign: String }
        let offers: [Offer]
    }

    @Test("pause: no door hands the campaign's offers out, which stay live; resume: back; withdraw: ended, counted, never revived")
    func pauseResumeWithdraw() async throws {
        let setup = try CampaignTestSetup()
        defer { setup.remove() }
        try await withProcessedCorpus(setup) { client, dependencies in
            // As a server does at start-up: the config's campaigns mirrored, where the switch lives.
            try await client.transaction(logger: logger) {
                try await CampaignStore.sync(try setup.config.domainCampaigns(), connection: $0, logger: logger)
            }
            let appKey = try await TestKeys(client: client).create(scope: .app, bundleId: "GeniusParentingAI", logger: logger)
            let app = Application(router: buildRouter(dependencies), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.live) { http in
                func offers() async throws -> [String] {
                    var headers = HTTPFields()
                    headers[.authorization] = "Bearer \(appKey)"
                    return try await http.execute(uri: "/v1/offers?appAccountToken=\(Self.token)", method: .get, headers: headers) {
                        #expect($0.status == .ok)
                        return try JSONDecoder().decode(Answer.self, from: Data(String(buffer: $0.body).utf8)).offers.map(\.campaign)
                    }
                }
                // The doors that read the database for one subscriber: the lookup by signed transactions and the cancel sheet.
                func otherDoors() async throws -> (lookup: Int, cancelSheet: Bool) {
                    let subscriber = try await client.withConnection(logger: logger) { connection -> SubscriberKey in
                        let rows = try await connection.query(
                            "SELECT bundle_id, environment, original_transaction_id FROM reclaim.offers WHERE app_account_token = \(UUID(uuidString: Self.token)!) LIMIT 1",
                            logger: logger
                        )
                        for try await (bundle, environment, otid) in rows.decode((String, String, String).self) {
                            return SubscriberKey(bundleId: bundle, environment: environment, originalTransactionId: otid)
                        }
                        throw DeadlineExceeded(description: "no offer of \(Self.token)")
                    }
                    return try await client.transaction(logger: logger) { connection in
                        (
                            try await OfferStore.lockDeliverable(subscriber: subscriber, connection: connection, logger: logger).count,
                            try await OfferStore.liveOfferWithGrantMessage(of: subscriber, connection: connection, logger: logger) != nil
                        )
                    }
                }
                #expect(try await offers() == ["winback-expired"])
                #expect(try await otherDoors() == (1, true))

                #expect(
                    try await CancelSheetStore.setPaused(true, campaignId: "winback-expired", reason: "bad copy", postgres: client, logger: logger)
                )
                #expect(try await offers() == [], "a paused campaign's offer was handed out")
                #expect(try await otherDoors() == (0, false))
                #expect(
                    try await firstInt(
                        client,
                        "SELECT count(*) FROM reclaim.offers WHERE campaign_id = 'winback-expired' AND state IN ('ready', 'delivered')"
                    ) ?? 0 > 0,
                    "paused offers stay stored and live"
                )

                #expect(try await CancelSheetStore.setPaused(false, campaignId: "winback-expired", reason: nil, postgres: client, logger: logger))
                #expect(try await offers() == ["winback-expired"])

                let live = try #require(
                    try await firstInt(
                        client,
                        "SELECT count(*) FROM reclaim.offers WHERE campaign_id = 'winback-expired' AND state IN ('ready', 'delivered')"
                    )
                )
                let withdrawn = try await CampaignStore.withdraw(
                    campaignId: "winback-expired",
                    reason: "wrong price",
                    postgres: client,
                    logger: logger
                )
                #expect(withdrawn == live)
                #expect(try await offers() == [])
                #expect(
                    try await firstInt(
                        client,
                        "SELECT count(*) FROM reclaim.offers WHERE campaign_id = 'winback-expired' AND state = 'withdrawn' AND end_reason LIKE '%reclaim campaigns withdraw%wrong price'"
                    ) == live
                )
                #expect(
                    try await firstInt(client, "SELECT sum(withdrawn)::bigint FROM reclaim.campaign_funnel WHERE campaign_id = 'winback-expired'")
                        ?? 0 >= live
                )
                // Resumed, it decides anew; the withdrawn offers stay withdrawn.
                #expect(try await CancelSheetStore.setPaused(false, campaignId: "winback-expired", reason: nil, postgres: client, logger: logger))
                #expect(try await offers() == [])
                #expect(try await CampaignStore.withdraw(campaignId: "no-such-campaign", reason: nil, postgres: client, logger: logger) == nil)
            }
        }
    }

    @Test("a grant to a subscriber holding a paused campaign's offer supersedes it as it would a running one's (it answered 500)")
    func grantBesidePausedCampaign() async throws {
        let setup = try CampaignTestSetup()
        defer { setup.remove() }
        try await withProcessedCorpus(setup) { client, dependencies in
            try await client.transaction(logger: logger) {
                try await CampaignStore.sync(try setup.config.domainCampaigns(), connection: $0, logger: logger)
            }
            let live = try await OfferRow.all(client).filter { $0.state == "ready" || $0.state == "delivered" }
            let paused = try #require(live.first { $0.campaignId == "winback-expired" })
            #expect(try await CancelSheetStore.setPaused(true, campaignId: "winback-expired", reason: "incident", postgres: client, logger: logger))
            let adminKey = try await TestKeys(client: client).create(scope: .admin, bundleId: nil, logger: logger)
            let app = Application(router: buildRouter(dependencies), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.router) { http in
                let body = [
                    "bundleId": "GeniusParentingAI", "originalTransactionId": "2000000970472825", "productId": "ca.geniusparentingai.basic.monthly",
                    "offerIdentifier": "RETAIN50", "reason": "make-good", "campaign": "support",
                ]
                let (status, answer) = try await GrantTests.grant(body, key: adminKey, idempotencyKey: "paused-1", http: http)
                #expect(status == .created, "\(status) \(answer)")
            }
            let after = try await OfferRow.all(client)
            let ended = try #require(after.first { $0.id == paused.id })
            #expect(
                ended.state == "withdrawn" && ended.endReason?.hasPrefix("superseded by grant") == true,
                "\(ended.state) \(ended.endReason ?? "")"
            )
            #expect(after.filter { $0.state == "ready" || $0.state == "delivered" }.map(\.campaignId) == ["support"])
        }
    }

    @Test(
        "withdraw is final whatever batch is under way: an offer a batch decided before the withdrawal committed is ended with it, and resume does not deliver it"
    )
    func withdrawBesideABatch() async throws {
        let ca = try TestCertificateAuthority()
        let setup = try CampaignTestSetup(ca: ca)
        defer { setup.remove() }
        let notifications = TestNotifications(ca: ca, bundleId: "GeniusParentingAI", environment: "Sandbox", appAppleId: 6_747_332_178)
        try await withTestDatabase { client, _ in
            try await client.transaction(logger: logger) {
                try await CampaignStore.sync(try setup.config.domainCampaigns(), connection: $0, logger: logger)
            }
            let dependencies = try Dependencies.test(postgres: client, config: setup.config)
            let uuid = UUID()
            let body = try notifications.body(
                uuid: uuid,
                originalTransactionId: "3000000000980001",
                transactionFields: [
                    "productId": "ca.geniusparentingai.basic.monthly",
                    "expiresDate": Int64(Date().addingTimeInterval(86400 * 20).timeIntervalSince1970 * 1000),
                ]
            )
            try await ingestNotifications([body], dependencies: dependencies)
            let signed = try #require((try JSONSerialization.jsonObject(with: body) as? [String: Any])?["signedPayload"] as? String)
            let snapshot = try #require(SubscriptionSnapshot(try await dependencies.verifier.verifyNotification(signed), notificationUUID: uuid))

            // A batch under way: it has read the campaigns (running) and decided the offer, not yet committed.
            let decided = AsyncStream<Void>.makeStream()
            let release = AsyncStream<Void>.makeStream()
            let batch = Task {
                try await client.transaction(logger: logger) { connection in
                    try await connection.query("SELECT pg_advisory_xact_lock_shared(\(WorkerBarrier.key))", logger: logger)
                    try await dependencies.campaignEngine.process(batch: [snapshot], connection: connection, logger: logger)
                    decided.continuation.yield()
                    for await _ in release.stream { break }
                }
            }
            for await _ in decided.stream { break }
            let withdrawal = Task {
                try await CampaignStore.withdraw(campaignId: "retain-auto-renew-off", reason: "wrong price", postgres: client, logger: logger)
            }
            // The withdrawal either waits for the batch (the barrier) or, without one, has already committed.
            try await eventually("the withdrawal waits for the batch, or is done", timeout: .seconds(30)) {
                let waiting = try await firstInt(
                    client,
                    "SELECT count(*)::int FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()"
                )
                let paused = try await firstInt(client, "SELECT count(*)::int FROM reclaim.campaigns WHERE paused_at IS NOT NULL")
                return waiting ?? 0 >= 1 || paused == 1
            }
            release.continuation.yield()
            try await batch.value
            _ = try await withdrawal.value
            let live = try await OfferRow.all(client).filter { $0.state == "ready" || $0.state == "delivered" }
            #expect(live.isEmpty, "an offer of the withdrawn campaign is live: \(live.map(\.campaignId))")
            #expect(try await CancelSheetStore.setPaused(false, campaignId: "retain-auto-renew-off", reason: nil, postgres: client, logger: logger))
            #expect(try await OfferRow.all(client).allSatisfy { $0.state == "withdrawn" })
        }
    }
}
