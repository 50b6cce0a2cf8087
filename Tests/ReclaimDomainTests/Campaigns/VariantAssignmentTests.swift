import Foundation
import ReclaimDomain
import ReclaimTestSupport
import Testing

/// An experiment's arms: drawn by weight, stable per subscriber, and kept when the weights change.
@Suite(.poolWatchdog) struct VariantAssignmentTests: CampaignFactories {
    static let arms = [
        CampaignVariant(id: "fifty", productId: Fixture.monthly, offerIdentifier: "winback50", weight: 1),
        CampaignVariant(id: "thirty", productId: Fixture.monthly, offerIdentifier: "winback30", weight: 2),
        CampaignVariant(id: "free-month", productId: Fixture.monthly, offerIdentifier: "free1", weight: 1),
    ]

    func experiment(_ arms: [CampaignVariant] = Self.arms, holdoutPercent: Int = 0) -> NotificationCampaign {
        var experiment = campaign("winback", holdoutPercent: holdoutPercent)
        experiment.variants = arms
        return experiment
    }

    /// Values computed independently with Python:
    /// `int.from_bytes(sha256(f"{otid}\0{campaign}\0variant".encode()).digest()[:8], "big")`.
    @Test func bucketIsTheDocumentedHash() async throws {
        let script = """
            import hashlib, sys
            print(int.from_bytes(hashlib.sha256(f"{sys.argv[1]}\\0{sys.argv[2]}\\0variant".encode()).digest()[:8], "big"))
            """
        try await ExternalTools.withTemporaryDirectory { directory in
            for (id, campaign) in [("2000000123456789", "winback-expired"), ("1000000000000001", "x")] {
                let python = try await ExternalTools.python(script, [id, campaign], in: directory).trimmingCharacters(in: .whitespacesAndNewlines)
                #expect(String(VariantAssignment.bucket(originalTransactionId: id, campaignId: campaign)) == python)
            }
        }
    }

    @Test("10,000 subscribers: each arm's share within 4 standard deviations of its weight's")
    func proportionsFollowTheWeights() {
        let ids = HoldoutTests.originalTransactionIds(count: 10_000, seed: 23)
        var counts: [String: Int] = [:]
        for id in ids {
            let arm = VariantAssignment.variant(of: Self.arms, originalTransactionId: id, campaignId: "winback", earlier: nil)
            counts[arm?.id ?? "none", default: 0] += 1
        }
        let total = Double(ids.count)
        for (arm, share) in [("fifty", 0.25), ("thirty", 0.5), ("free-month", 0.25)] {
            let sigma = (total * share * (1 - share)).squareRoot()
            let observed = Double(counts[arm] ?? 0)
            #expect(abs(observed - total * share) <= 4 * sigma, "\(arm): \(observed) of \(total), expected \(total * share) ± \(4 * sigma)")
        }
    }

    @Test("the evaluator offers the drawn arm's offer, records it, and keeps an existing subscriber's arm when the weights change")
    func stableAcrossWeightChanges() throws {
        let ids = HoldoutTests.originalTransactionIds(count: 500, seed: 29)
        var first: [String: String] = [:]
        for id in ids {
            let decision = try #require(
                CampaignEvaluator.evaluate(
                    campaigns: [experiment()],
                    state: state(originalTransactionId: id),
                    event: event(),
                    history: OfferHistory(),
                    now: Fixture.t0
                )
                .first
            )
            #expect(decision.outcome == .offered)
            let arm = try #require(decision.variant)
            #expect(decision.reason.contains("(variant \(arm.id))"))
            first[id] = arm.id
            // The same call again (a restart, another worker): the same arm.
            #expect(VariantAssignment.variant(of: Self.arms, originalTransactionId: id, campaignId: "winback", earlier: nil)?.id == arm.id)
        }
        // The operator now favours the free month 10:1:1. Subscribers who already had an arm keep it; new ones follow
        // the new weights.
        var reweighted = Self.arms
        reweighted[0].weight = 1
        reweighted[1].weight = 1
        reweighted[2].weight = 10
        var moved = 0
        for id in ids {
            let earlier = OfferHistory(decisions: [
                .init(campaignId: "winback", outcome: .offered, triggeredAt: Fixture.days(-200), variantId: first[id])
            ])
            let decision = try #require(
                CampaignEvaluator.evaluate(
                    campaigns: [experiment(reweighted)],
                    state: state(originalTransactionId: id),
                    event: event(),
                    history: earlier,
                    now: Fixture.t0
                )
                .first
            )
            #expect(decision.variant?.id == first[id], "an existing subscriber changed arm")
            if VariantAssignment.variant(of: reweighted, originalTransactionId: id, campaignId: "winback", earlier: nil)?.id != first[id] {
                moved += 1
            }
        }
        #expect(moved > 100, "the new weights do change a new subscriber's draw (\(moved) of \(ids.count)); the history is what keeps the old ones")
        // An arm removed from the config: its subscribers are drawn again among the remaining ones.
        let kept = Array(Self.arms.dropFirst())
        let orphan = try #require(ids.first { first[$0] == "fifty" })
        let again = VariantAssignment.variant(of: kept, originalTransactionId: orphan, campaignId: "winback", earlier: "fifty")
        #expect(again.map { ["thirty", "free-month"].contains($0.id) } == true)
    }

    @Test("held-out subscribers get no arm; a campaign without variants has one with the empty id")
    func holdoutAndPlainCampaigns() throws {
        let ids = HoldoutTests.originalTransactionIds(count: 300, seed: 31)
        for id in ids {
            let decision = try #require(
                CampaignEvaluator.evaluate(
                    campaigns: [experiment(holdoutPercent: 20)],
                    state: state(originalTransactionId: id),
                    event: event(),
                    history: OfferHistory(),
                    now: Fixture.t0
                ).first
            )
            #expect((decision.outcome == .heldOut) == (decision.variant == nil))
        }
        let plain = try #require(
            CampaignEvaluator.evaluate(campaigns: [campaign("winback")], state: state(), event: event(), history: OfferHistory(), now: Fixture.t0)
                .first
        )
        #expect(plain.variant?.id == "")
        #expect(plain.variant?.offerIdentifier == Fixture.offerIdentifier)
        #expect(!plain.reason.contains("variant"))
    }
}
