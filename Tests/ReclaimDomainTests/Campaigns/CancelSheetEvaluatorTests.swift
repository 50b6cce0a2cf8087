import Foundation
import ReclaimTestSupport
import Testing

@testable import ReclaimDomain

@Suite("Cancel-sheet rules", .poolWatchdog)
struct CancelSheetEvaluatorTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let message = CampaignVariant(id: "", productId: "", offerIdentifier: "", answer: .message(messageIdentifier: "m"))

    static func campaign(
        _ id: String,
        priority: Int = 0,
        holdout: Int = 0,
        cooldown: TimeInterval = 86_400,
        conditions: CampaignConditions = .init()
    )
        -> CancelSheetCampaign
    {
        CancelSheetCampaign(
            CampaignBasics(
                id: id,
                bundleId: "app",
                conditions: conditions,
                variants: [message],
                cooldown: cooldown,
                maxOffersPerSubscriber: 2,
                holdoutPercent: holdout,
                priority: priority
            )
        )
    }

    static func decide(
        _ campaigns: [CancelSheetCampaign],
        earlier: [CancelSheetEvaluator.PastDecision] = [],
        paused: Set<String> = [],
        state: SubscriptionState? = nil,
        at: Date = now
    )
        -> CancelSheetDecision?
    {
        CancelSheetEvaluator.decide(
            campaigns: campaigns,
            request: .init(bundleId: "app", originalTransactionId: "1000", productId: "monthly", now: at),
            state: state,
            earlier: earlier,
            paused: paused
        ).decision
    }

    @Test("the highest priority whose conditions hold decides; the request's product counts; unknown tenure is unmet")
    func priorityAndConditions() {
        let yearly = Self.campaign("yearly", priority: 9, conditions: .init(products: ["yearly"]))
        let tenure = Self.campaign("tenure", priority: 8, conditions: .init(minimumTenure: 86_400))
        let monthly = Self.campaign("monthly", priority: 1, conditions: .init(products: ["monthly"]))
        #expect(Self.decide([monthly, yearly, tenure])?.campaign.id == "monthly")
        var state = SubscriptionState(bundleId: "app", environment: "Sandbox", originalTransactionId: "1000")
        state.productId = "yearly"  // the stored product is older than the request's
        state.firstPurchaseAt = Self.now.addingTimeInterval(-10 * 86_400)
        #expect(Self.decide([monthly, yearly, tenure], state: state)?.campaign.id == "tenure")
        #expect(
            Self.decide(
                [Self.campaign("other-app")].map {
                    var c = $0
                    c.bundleId = "other"
                    return c
                }
            ) == nil
        )
    }

    @Test("within the cooldown a decision is repeated, holdout included; after it a new one is made, up to the maximum")
    func repeatsAndMaximum() throws {
        let campaign = Self.campaign("c")
        let first = try #require(Self.decide([campaign]))
        #expect(first.outcome == .answered && first.repeatOf == nil && first.answer == .message(messageIdentifier: "m"))
        let past = CancelSheetEvaluator.PastDecision(id: UUID(), campaignId: "c", outcome: .answered, variantId: nil, decidedAt: Self.now)
        let again = try #require(Self.decide([campaign], earlier: [past], at: Self.now.addingTimeInterval(3600)))
        #expect(again.repeatOf == past.id && again.outcome == .answered)
        let held = CancelSheetEvaluator.PastDecision(id: UUID(), campaignId: "c", outcome: .heldOut, variantId: nil, decidedAt: Self.now)
        #expect(Self.decide([campaign], earlier: [held], at: Self.now.addingTimeInterval(3600))?.outcome == .heldOut)
        let later = Self.now.addingTimeInterval(2 * 86_400)
        #expect(Self.decide([campaign], earlier: [past], at: later)?.repeatOf == nil)
        var second = past
        second.id = UUID()
        #expect(Self.decide([campaign], earlier: [past, second], at: later) == nil, "two answers given: the maximum")
    }

    @Test("switched off: the campaign that would decide answers nothing and lower ones do not take over; shadow answers nothing")
    func pausedAndShadow() throws {
        let top = Self.campaign("top", priority: 5)
        let low = Self.campaign("low", priority: 1)
        let paused = try #require(Self.decide([top, low], paused: ["top"]))
        #expect(paused.outcome == .switchedOff && paused.answer == nil && paused.campaign.id == "top")
        var shadow = top
        shadow.shadow = true
        let decision = try #require(Self.decide([shadow, low]))
        #expect(decision.answer == nil && decision.armAnswer == .message(messageIdentifier: "m"))
        #expect(Self.decide([Self.campaign("all", holdout: 100)])?.answer == nil)
    }
}
