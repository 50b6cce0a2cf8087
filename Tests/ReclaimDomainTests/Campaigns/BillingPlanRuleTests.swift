import Foundation
import ReclaimTestSupport
import Testing

@testable import ReclaimDomain

/// Issue 65: the rules that read a subscription's billing plan (Apple's `billingPlanType`: MONTHLY with a 12-month
/// commitment, BILLED_UPFRONT). Apple: "Subscription offers … are specific to each billing plan."
@Suite("Billing plans in the rules: an offer per plan, the budget per plan, refunds by plan and period", .poolWatchdog)
struct BillingPlanRuleTests: CampaignFactories {
    /// An arm with an offer for each plan, and optionally one for any other plan.
    static func perPlan(anyOther: String = "") -> CampaignVariant {
        CampaignVariant(
            id: "",
            productId: Fixture.monthly,
            offerIdentifier: anyOther,
            offerIdentifiersByPlan: ["MONTHLY": "winback-monthly", "BILLED_UPFRONT": "winback-upfront"]
        )
    }

    func planned(_ plan: String?) -> SubscriptionState {
        var state = state()
        state.billingPlanType = plan
        return state
    }

    @Test("each plan gets its own offer; an unknown plan gets the one for any plan, or is skipped with why")
    func offerPerPlan() throws {
        var winback = campaign()
        winback.variants = [Self.perPlan()]
        #expect(try decide(winback, state: planned("MONTHLY")).variant?.offerIdentifier == "winback-monthly")
        #expect(try decide(winback, state: planned("BILLED_UPFRONT")).variant?.offerIdentifier == "winback-upfront")
        let unknown = try decide(winback, state: planned(nil))
        #expect(unknown.outcome == .skipped)
        #expect(unknown.reason.hasPrefix("no offer for billing plan unknown"), "\(unknown.reason)")
        // A value Apple may add later is unknown to the offers too: never handed another plan's offer.
        #expect(try decide(winback, state: planned("QUARTERLY")).outcome == .skipped)
        winback.variants = [Self.perPlan(anyOther: "winback50")]
        #expect(try decide(winback, state: planned(nil)).variant?.offerIdentifier == "winback50")
        #expect(try decide(winback, state: planned("MONTHLY")).variant?.offerIdentifier == "winback-monthly")
        // A campaign with one offer is unchanged.
        #expect(try decide(campaign(), state: planned("MONTHLY")).variant?.offerIdentifier == Fixture.offerIdentifier)
    }

    @Test("the discount budget of a plan holds its subscriptions; the others keep the app's")
    func budgetPerPlan() throws {
        var winback = campaign()
        winback.discountBudget = DiscountBudget(
            redemptions: 2,
            window: 365 * Fixture.day,
            byPlan: ["MONTHLY": DiscountBudget(redemptions: 1, window: 365 * Fixture.day, plan: "MONTHLY")]
        )
        let history = OfferHistory(discounts: [.init(at: Fixture.days(-30), offer: "2/earlier")])
        let monthly = try decide(winback, state: planned("MONTHLY"), history: history)
        #expect(monthly.outcome == .skipped)
        #expect(monthly.reason.hasPrefix("discount budget of MONTHLY plans: 1 discounted offer"), "\(monthly.reason)")
        #expect(try decide(winback, state: planned("BILLED_UPFRONT"), history: history).outcome == .offered)
        #expect(try decide(winback, state: planned(nil), history: history).outcome == .offered)
    }

    @Test("the cancel sheet answers a plan's subscription with that plan's offer, and skips a plan it has none for")
    func cancelSheetPerPlan() {
        var variant = Self.perPlan()
        variant.answer = .offer(productId: Fixture.monthly, offerIdentifier: "", messageIdentifier: "m", signature: .v2)
        let sheet = CancelSheetCampaign(
            CampaignBasics(
                id: "sheet",
                bundleId: "app",
                conditions: CampaignConditions(billingPlans: ["MONTHLY", "BILLED_UPFRONT"]),
                variants: [variant]
            )
        )
        func answer(_ plan: String?) -> (CancelSheetAnswer?, [String]) {
            var state = SubscriptionState(bundleId: "app", environment: "Sandbox", originalTransactionId: "1000")
            state.billingPlanType = plan
            let (decision, skipped) = CancelSheetEvaluator.decide(
                campaigns: [sheet],
                request: .init(bundleId: "app", originalTransactionId: "1000", productId: Fixture.monthly, now: Fixture.t0),
                state: state,
                earlier: [],
                paused: []
            )
            return (decision?.answer, skipped.map(\.reason))
        }
        #expect(answer("MONTHLY").0?.offerIdentifier == "winback-monthly")
        #expect(answer("BILLED_UPFRONT").0?.offerIdentifier == "winback-upfront")
        let (none, skipped) = answer(nil)
        #expect(none == nil)
        #expect(skipped.first?.hasPrefix("condition not met: billing plan unknown") == true, "\(skipped)")
    }

    @Test(
        "a commitment that will not renew defers a campaign only while the subscription is active: a lapse mid-commitment (billing retry run out) is decided now"
    )
    func deferralOnlyWhileActive() {
        var state = planned("MONTHLY")
        state.commitmentExpiresAt = Fixture.days(200)
        state.commitmentAutoRenew = false
        state.status = .active
        let winback = campaign(trigger: CampaignTrigger(type: "EXPIRED"))
        let active = CampaignEvaluator.commitmentDeferrals(campaigns: [winback], state: state, event: event(), now: Fixture.t0)
        #expect(active.now.isEmpty && active.deferred.first?.fireAt == Fixture.days(186))
        state.status = .expired
        let lapsed = CampaignEvaluator.commitmentDeferrals(
            campaigns: [winback],
            state: state,
            event: event("EXPIRED", "BILLING_RETRY"),
            now: Fixture.t0
        )
        #expect(lapsed.now.map(\.id) == ["winback"] && lapsed.deferred.isEmpty)
    }

    @Test("refund conditions by plan and by period: current while the refunded period runs when Apple asks, past after")
    func refundsByPlanAndPeriod() {
        #expect(RefundFacts.BillingPeriod(expiresDate: Fixture.days(10), requestedAt: Fixture.t0) == .current)
        #expect(RefundFacts.BillingPeriod(expiresDate: Fixture.days(-10), requestedAt: Fixture.t0) == .past)
        #expect(RefundFacts.BillingPeriod(expiresDate: nil, requestedAt: Fixture.t0) == nil)
        func facts(_ plan: String?, _ period: RefundFacts.BillingPeriod?) -> RefundFacts {
            RefundFacts(
                productId: Fixture.monthly,
                productType: "Auto-Renewable Subscription",
                storefront: "FRA",
                reason: "UNSATISFIED_WITH_PURCHASE",
                purchaseDate: Fixture.days(-5),
                originalPurchaseDate: Fixture.days(-100),
                earlierRefunds: 0,
                discountRedeemed: false,
                freeTrialSeen: false,
                billingPlanType: plan,
                billingPeriod: period,
                now: Fixture.t0
            )
        }
        var currentMonthly = RefundConditions()
        currentMonthly.billingPlans = ["MONTHLY"]
        currentMonthly.billingPeriods = [.current]
        #expect(currentMonthly.hold(for: facts("MONTHLY", .current)))
        #expect(!currentMonthly.hold(for: facts("MONTHLY", .past)))
        #expect(!currentMonthly.hold(for: facts("BILLED_UPFRONT", .current)))
        #expect(!currentMonthly.hold(for: facts(nil, .current)), "an unknown plan matches no plan")
        #expect(!currentMonthly.hold(for: facts("MONTHLY", nil)), "an unknown period matches no period")
        #expect(RefundConditions().hold(for: facts(nil, nil)))
    }
}
