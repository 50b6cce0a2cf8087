import Foundation
import PostgresNIO
import ReclaimDomain
import ReclaimService
import ReclaimStore
import ReclaimTestSupport
import SwiftASN1
import Testing
import X509

@Suite("Delayed campaigns: fired later through the queue, re-checked when they fire", .poolWatchdog)
struct DelayedCampaignTests {
    let logger = TestPostgres.logger

    @Test("a lapse fires the win-back 2 s later; a subscriber who came back within the delay is skipped with the reason")
    func firesAfterTheDelay() async throws {
        let ca = try TestCertificateAuthority()
        let setup = try CampaignTestSetup(
            ca: ca,
            winbackOffer: "offer: {productId: ca.geniusparentingai.basic.monthly, offerIdentifier: WINBACK30}\n    delay: 2s"
        )
        defer { setup.remove() }
        let notifications = TestNotifications(ca: ca, bundleId: "GeniusParentingAI", environment: "Sandbox", appAppleId: 6_747_332_178)
        let now = Date()
        let lapsed = "2000000000001001"
        let cameBack = "2000000000001002"
        let bodies = [
            try notifications.body(
                type: "EXPIRED",
                subtype: "VOLUNTARY",
                originalTransactionId: lapsed,
                appAccountToken: nil,
                signedDate: now,
                status: 2
            ),
            try notifications.body(
                type: "EXPIRED",
                subtype: "VOLUNTARY",
                originalTransactionId: cameBack,
                appAccountToken: nil,
                signedDate: now,
                status: 2
            ),
            try notifications.body(
                type: "SUBSCRIBED",
                subtype: "RESUBSCRIBE",
                originalTransactionId: cameBack,
                appAccountToken: nil,
                signedDate: now.addingTimeInterval(1),
                transactionFields: ["expiresDate": Int64((now.timeIntervalSince1970 + 30 * 86_400) * 1000)],
                status: 1
            ),
        ]
        try await withTestDatabase { client, _ in
            let dependencies = try Dependencies.test(postgres: client, config: setup.config)
            // Returns once every job is completed: the fire jobs included, which are due 2 s after their trigger.
            try await processNotifications(bodies, client: client, dependencies: dependencies)
            let rows = try await client.query(
                """
                SELECT d.original_transaction_id, d.outcome, d.reason, extract(epoch FROM d.decided_at - d.triggered_at)::float8, o.offer_identifier
                FROM reclaim.campaign_decisions d LEFT JOIN reclaim.offers o ON o.decision_id = d.id
                WHERE d.campaign_id = 'winback-expired'
                """,
                logger: logger
            )
            var found: [String: (String, String, Double, String?)] = [:]
            for try await (otid, outcome, reason, after, offer) in rows.decode((String, String, String, Double, String?).self) {
                found[otid] = (outcome, reason, after, offer)
            }
            #expect(found.count == 2, "one decision per trigger, made when it fired: \(found)")
            let fired = try #require(found[lapsed])
            #expect(fired.0 == "offered" && fired.3 == "WINBACK30", "\(fired)")
            #expect(fired.2 >= 1.9, "decided \(fired.2) s after the trigger; the delay is 2 s")
            let skipped = try #require(found[cameBack])
            #expect(skipped.0 == "skipped" && skipped.1.hasPrefix("came back"), "\(skipped)")
            #expect(try await firstInt(client, "SELECT count(*) FROM reclaim.jobs WHERE kind = 'campaign-fire' AND state = 'completed'") == 2)
        }
    }

    @Test("kill -9 of the worker between the triggers and their fires, 3 times: every pending fire survives and fires once")
    func killNineBetweenTriggerAndFire() async throws {
        let (directory, ca) = try serverTestFiles(prefix: "delay", keyId: "DELAYKEY01")
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try writeServerConfig(
            in: directory,
            keyId: "DELAYKEY01",
            campaigns: """
                  - id: winback-later
                    app: com.example.app
                    trigger: EXPIRED/VOLUNTARY
                    offer: {productId: com.example.monthly, offerIdentifier: WINBACK30}
                    delay: 4s
                """,
            settings: "worker: {lease: 3s, pollInterval: 1s}"
        )
        let notifications = TestNotifications(ca: ca)
        let subscribers = 200
        let bodies = try (0..<subscribers).map { index in
            try notifications.body(
                type: "EXPIRED",
                subtype: "VOLUNTARY",
                originalTransactionId: "\(5_000_000_000_000_000 + index)",
                appAccountToken: nil,
                status: 2
            )
        }
        try await withTestDatabase { client, url in
            try await ServerProcess.withAPIAndWorker(config: config, databaseURL: url.connectionString, logs: directory) { api, worker in
                _ = try await CampaignCrashTests.post(bodies.map { (UUID(), $0) }, port: api.port)
                // The triggers are processed; their fires are due 4 s after each trigger. Kill the worker three times,
                // the last about when the fires come due, restarting it at once.
                for _ in 0..<3 {
                    try await Task.sleep(for: .milliseconds(Int.random(in: 1200...1600)))
                    await worker.killNine()
                    try worker.start()
                }
                try await eventually("every trigger and fire processed", timeout: .seconds(120), every: .milliseconds(200)) {
                    let rows = try await client.query(
                        "SELECT count(*)::bigint FROM reclaim.jobs WHERE state <> 'completed'",
                        logger: logger
                    )
                    for try await count in rows.decode(Int64.self) { return count == 0 }
                    return false
                }
                #expect(try await firstInt(client, "SELECT count(*) FROM reclaim.jobs WHERE kind = 'campaign-fire'") == subscribers)
                let perSubscriber = try await client.query(
                    """
                    SELECT count(*)::bigint, min(n)::bigint, max(n)::bigint FROM (
                        SELECT s.original_transaction_id, count(o.id) AS n
                        FROM reclaim.subscriptions s LEFT JOIN reclaim.offers o USING (bundle_id, environment, original_transaction_id)
                        GROUP BY 1) t
                    """,
                    logger: logger
                )
                for try await (count, least, most) in perSubscriber.decode((Int64, Int64, Int64).self) {
                    #expect(count == Int64(subscribers))
                    #expect(least == 1 && most == 1, "each pending fire fired once: offers per subscriber \(least)…\(most)")
                }
                #expect(
                    try await firstInt(client, "SELECT count(*) FROM reclaim.campaign_decisions WHERE campaign_id = 'winback-later'") == subscribers,
                    "one decision per trigger"
                )
            }
        }
    }
}
