import Foundation
import ReclaimDomain
import ReclaimTestSupport
import Testing

/// The control group: stable per subscriber and campaign, of the configured size, independent between campaigns.
@Suite(.poolWatchdog) struct HoldoutTests: CampaignFactories {
    /// `count` originalTransactionIds shaped like Apple's (16 digits starting with 2), from a SeededGenerator:
    /// the same on every run, so a statistical bound that holds once holds always.
    static func originalTransactionIds(count: Int, seed: UInt64) -> [String] {
        var generator = SeededGenerator(state: seed)
        return (0..<count).map { _ in String(UInt64.random(in: 2_000_000_000_000_000...2_999_999_999_999_999, using: &generator)) }
    }

    /// Values computed independently with Python: `int.from_bytes(sha256(f"{otid}\0{campaign}").digest()[:8], "big") % 10000`.
    @Test(arguments: [
        ("2000000123456789", "winback-expired", 2104),
        ("2000000123456789", "retention-billing", 9046),
        ("1000000000000001", "winback-expired", 4645),
        ("", "x", 2752),
    ])
    func bucketIsTheDocumentedHash(originalTransactionId: String, campaignId: String, bucket: Int) {
        #expect(Holdout.bucket(originalTransactionId: originalTransactionId, campaignId: campaignId) == bucket)
    }

    @Test func sameSubscriberAndCampaignGiveTheSameBucketEveryCall() {
        for id in Self.originalTransactionIds(count: 1000, seed: 7) {
            let first = Holdout.bucket(originalTransactionId: id, campaignId: "winback")
            #expect((0..<Holdout.buckets).contains(first))
            for _ in 0..<3 {
                #expect(Holdout.bucket(originalTransactionId: id, campaignId: "winback") == first)
            }
            #expect(Holdout.isHeldOut(originalTransactionId: id, campaignId: "winback", percent: 10) == (first < 1000))
        }
    }

    @Test func theEvaluatorHoldsOutStablyAndAsHoldoutSays() throws {
        let tenPercent = campaign("winback", holdoutPercent: 10)
        for id in Self.originalTransactionIds(count: 300, seed: 11) {
            let subscriber = state(originalTransactionId: id)
            let expectedOutcome: CampaignDecision.Outcome =
                Holdout.isHeldOut(originalTransactionId: id, campaignId: "winback", percent: 10) ? .heldOut : .offered
            for _ in 0..<2 {
                let decision = try decide(tenPercent, state: subscriber)
                Expected(outcome: expectedOutcome, word: expectedOutcome == .heldOut ? "held out" : "eligible").check(decision, "\(id)")
                if decision.outcome == .heldOut { #expect(decision.supersedes == nil) }
            }
        }
    }

    /// Over 10,000 ids the held-out share is p ± 4 standard deviations (σ = √(p(1−p)/n); 0.3 points for 10%).
    @Test(arguments: [
        (10, UInt64(1)),
        (10, UInt64(2)),
        (10, UInt64(3)),
        (50, UInt64(1)),
        (1, UInt64(1)),
    ])
    func heldOutShareMatchesThePercent(percent: Int, seed: UInt64) {
        let ids = Self.originalTransactionIds(count: 10_000, seed: seed)
        #expect(Set(ids).count > 9_990)
        let heldOut = ids.filter { Holdout.isHeldOut(originalTransactionId: $0, campaignId: "winback", percent: percent) }.count
        let share = Double(heldOut) / Double(ids.count)
        let p = Double(percent) / 100
        let bound = 4 * (p * (1 - p) / Double(ids.count)).squareRoot()
        #expect(abs(share - p) <= bound, "held out \(heldOut) of \(ids.count) at \(percent)%")
        if percent == 10 { #expect(bound <= 0.012) }
    }

    @Test(arguments: [0, 100])
    func noneOrEveryoneAtTheExtremes(percent: Int) {
        let ids = Self.originalTransactionIds(count: 10_000, seed: 5)
        let heldOut = ids.filter { Holdout.isHeldOut(originalTransactionId: $0, campaignId: "winback", percent: percent) }.count
        #expect(heldOut == ids.count * percent / 100)
    }

    /// Two campaigns at 10% each: being held out of one says nothing about the other. The share held out of both
    /// is 1% ± 4σ (0.4 points), and among those held out of the first, 10% ± 4σ are held out of the second.
    @Test func twoCampaignsHoldOutIndependentGroups() {
        let ids = Self.originalTransactionIds(count: 10_000, seed: 42)
        let inA = ids.map { Holdout.isHeldOut(originalTransactionId: $0, campaignId: "winback-expired", percent: 10) }
        let inB = ids.map { Holdout.isHeldOut(originalTransactionId: $0, campaignId: "retention-billing", percent: 10) }
        let n = Double(ids.count)
        let both = Double(zip(inA, inB).filter { $0 && $1 }.count)
        let joint = 0.01
        #expect(abs(both / n - joint) <= 4 * (joint * (1 - joint) / n).squareRoot(), "held out of both: \(both)")

        let heldOutOfA = Double(inA.filter { $0 }.count)
        let conditional = both / heldOutOfA
        #expect(abs(conditional - 0.1) <= 4 * (0.1 * 0.9 / heldOutOfA).squareRoot(), "\(both) of \(heldOutOfA) held out of A")

        // Not the same buckets shifted or reused: equal buckets are as rare as chance makes them (n / 10,000 ≈ 1).
        let sameBucket = ids.filter {
            Holdout.bucket(originalTransactionId: $0, campaignId: "winback-expired")
                == Holdout.bucket(originalTransactionId: $0, campaignId: "retention-billing")
        }.count
        #expect(sameBucket <= 10)
    }
}
