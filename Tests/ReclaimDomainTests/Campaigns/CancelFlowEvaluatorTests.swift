import Foundation
import ReclaimTestSupport
import Testing

@testable import ReclaimDomain

/// The cancel flow's own rules (reason, what the app can show, a subscription to offer to), then the cancel sheet's
/// engine: the holdout, the arm, the first decision repeated within the cooldown.
@Suite("Cancel-flow rules", .poolWatchdog)
struct CancelFlowEvaluatorTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let offer = CampaignVariant(
        id: "half",
        productId: "monthly",
        offerIdentifier: "SAVE50",
        answer: .offer(productId: "monthly", offerIdentifier: "SAVE50", messageIdentifier: "", signature: .v2)
    )
    static let note = CampaignVariant(id: "note", productId: "", offerIdentifier: "", answer: .message(messageIdentifier: "roadmap"))

    static func campaign(
        _ id: String,
        reasons: Set<String>? = nil,
        holdout: Int = 0,
        priority: Int = 0,
        variants: [CampaignVariant] = [offer, note]
    )
        -> CancelFlowCampaign
    {
        CancelFlowCampaign(
            CampaignBasics(id: id, bundleId: "app", variants: variants, cooldown: 86_400, holdoutPercent: holdout, priority: priority),
            reasons: reasons
        )
    }

    static func subscriber(_ id: String = "1000") -> SubscriptionState {
        var state = SubscriptionState(bundleId: "app", environment: "Sandbox", originalTransactionId: id)
        state.productId = "monthly"
        state.status = .active
        state.firstPurchaseAt = now.addingTimeInterval(-90 * 86_400)
        return state
    }

    static func decide(
        _ campaigns: [CancelFlowCampaign],
        reason: String?,
        canShow: Set<CancelFlowAnswerKind> = Set(CancelFlowAnswerKind.allCases),
        state: SubscriptionState = subscriber(),
        earlier: [CancelSheetEvaluator.PastDecision] = []
    ) -> (decision: CancelFlowDecision?, skipped: [(campaignId: String, reason: String)]) {
        CancelFlowEvaluator.decide(
            campaigns: campaigns,
            request: .init(bundleId: "app", originalTransactionId: state.originalTransactionId, reason: reason, canShow: canShow, now: now),
            state: state,
            earlier: earlier,
            paused: []
        )
    }

    @Test("a campaign takes only the survey answers it names; none is no answer; without reasons it takes every one")
    func reasons() {
        let priced = Self.campaign("priced", reasons: ["too_expensive"], priority: 10)
        let quiet = Self.campaign("quiet", reasons: ["none"], priority: 5)
        let any = Self.campaign("any", priority: 1)
        #expect(Self.decide([priced, quiet, any], reason: "too_expensive").decision?.campaign.id == "priced")
        let silent = Self.decide([priced, quiet, any], reason: nil)
        #expect(silent.decision?.campaign.id == "quiet")
        #expect(silent.skipped.first?.reason == "reason not taken: none is not one of too_expensive")
        #expect(Self.decide([priced, quiet, any], reason: "refund").decision?.campaign.id == "any")
        #expect(Self.decide([priced, quiet], reason: "refund").decision == nil)
    }

    @Test("a campaign with an arm the app cannot show is skipped, not answered with another arm")
    func canShow() {
        let both = Self.campaign("both")
        let offers = Self.campaign("offers", variants: [Self.offer])
        let result = Self.decide([both, offers], reason: nil, canShow: [.offer])
        #expect(result.decision?.campaign.id == "offers")
        #expect(result.skipped.map(\.reason) == ["the app cannot show a message answer, which an arm of this campaign gives"])
    }

    @Test("no subscription, or consent rescinded: no campaign answers, each says why")
    func subscriberRules() {
        var never = SubscriptionState(bundleId: "app", environment: "Sandbox", originalTransactionId: "1000")
        let none = Self.decide([Self.campaign("any")], reason: nil, state: never)
        #expect(none.decision == nil && none.skipped.first?.reason.hasPrefix("no subscription") == true)
        var rescinded = Self.subscriber()
        rescinded.consentRescindedAt = Self.now
        #expect(Self.decide([Self.campaign("any")], reason: nil, state: rescinded).skipped.first?.reason.hasPrefix("consent rescinded") == true)
    }

    @Test("the cancel sheet's engine: a holdout answers nothing; an earlier decision within the cooldown repeats with its arm")
    func engine() throws {
        let held = Self.decide([Self.campaign("all-held", holdout: 100)], reason: nil)
        #expect(held.decision?.outcome == .heldOut && held.decision?.answer == nil)
        let first = try #require(Self.decide([Self.campaign("c")], reason: nil).decision)
        #expect(first.outcome == .answered && first.repeatOf == nil)
        let past = CancelSheetEvaluator.PastDecision(
            id: UUID(),
            campaignId: "c",
            outcome: .answered,
            variantId: first.variant?.id,
            decidedAt: Self.now.addingTimeInterval(-60)
        )
        let again = try #require(Self.decide([Self.campaign("c")], reason: nil, earlier: [past]).decision)
        #expect(again.repeatOf == past.id && again.variant?.id == first.variant?.id)
    }
}
