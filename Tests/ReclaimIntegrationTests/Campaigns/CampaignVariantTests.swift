import Foundation
import PostgresNIO
import ReclaimService
import ReclaimStore
import ReclaimTestSupport
import Testing

@Suite("Campaign variants on the real corpus", .poolWatchdog)
struct CampaignVariantTests {
    let logger = TestPostgres.logger

    @Test(
        "every decision that offered and its offer carry the arm; the subscriber keeps one arm through 7 win-backs; events and redemptions reach it"
    )
    func corpusThroughAnExperiment() async throws {
        let setup = try CampaignTestSetup(
            winbackOffer: CampaignTestSetup.winbackExperiment
        )
        defer { setup.remove() }
        try await withProcessedCorpus(setup) { client, _ in
            let rows = try await client.query(
                """
                SELECT d.variant_id, o.variant_id, o.offer_identifier
                FROM reclaim.campaign_decisions d JOIN reclaim.offers o ON o.decision_id = d.id
                WHERE d.campaign_id = 'winback-expired' AND d.outcome = 'offered'
                """,
                logger: logger
            )
            var arms = Set<String>()
            var count = 0
            for try await (decided, offered, identifier) in rows.decode((String?, String?, String).self) {
                count += 1
                let arm = try #require(decided)
                #expect(offered == arm)
                #expect(identifier == (arm == "thirty" ? "WINBACK30" : "WINBACK50"))
                arms.insert(arm)
            }
            #expect(count == 7)
            #expect(arms.count == 1, "one subscriber, one arm, however many times it lapsed: \(arms)")
            // The campaign without variants records none.
            let plain = try await firstInt(
                client,
                "SELECT count(*) FROM reclaim.campaign_decisions WHERE campaign_id = 'retain-auto-renew-off' AND variant_id IS NOT NULL"
            )
            #expect(plain == 0)

            // Each arm's statistics, all time and for a recent period (the corpus is from July 2025).
            let allTime = try await client.withConnection(logger: logger) {
                try await LiftStatistics.load(environment: "Sandbox", campaign: "winback-expired", connection: $0, logger: logger)
            }
            #expect(allTime.map(\.variantId) == Array(arms) && allTime.first?.treated == 1, "\(allTime)")
            let recent = try await client.withConnection(logger: logger) {
                try await LiftStatistics.load(
                    environment: "Sandbox",
                    campaign: "winback-expired",
                    since: Date().addingTimeInterval(-30 * 86_400),
                    connection: $0,
                    logger: logger
                )
            }
            #expect(recent.isEmpty, "nobody was first triggered in the last 30 days: \(recent)")
        }
    }

    @Test("a campaign's variants are checked: offer or variants, ids, weights")
    func configChecks() {
        func problems(_ variants: String) -> String {
            let yaml = """
                apps: [{bundleId: a, environments: [Sandbox], issuerId: I, signingKeys: [{keyId: K, file: /k.p8}]}]
                campaigns:
                  - id: c
                    app: a
                    trigger: EXPIRED
                    \(variants)
                """
            do {
                _ = try ReclaimConfig.parse(yaml: yaml)
                return "accepted"
            } catch {
                return "\(error)"
            }
        }
        #expect(problems("variants: [{id: x, offer: {productId: p, offerIdentifier: o}, weight: 0}]").contains("variants[0].weight: must be from 1"))
        #expect(
            problems("variants: [{id: x, offer: {productId: p, offerIdentifier: o}}, {id: x, offer: {productId: p, offerIdentifier: q}}]")
                .contains("variants[1].id: x is listed twice")
        )
        #expect(
            problems("offer: {productId: p, offerIdentifier: o}\n    variants: [{id: x, offer: {productId: p, offerIdentifier: o}}]")
                .contains("give either offer or variants")
        )
        #expect(problems("deliverableFor: 7d").contains("offer: missing"))
        #expect(problems("variants: [{id: x, offer: {productId: p, offerIdentifier: o}, weigth: 2}]").contains("did you mean `weight`?"))
    }
}
