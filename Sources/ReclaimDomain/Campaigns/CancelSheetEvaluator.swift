import Foundation

/// The cancel-sheet rules: which ``CancelSheetCampaign`` answers Apple's realtime request for a
/// subscriber, and with which arm. Pure, like ``CampaignEvaluator``: no I/O, no clock, no randomness.
///
/// The app's cancel-sheet campaigns are tried highest priority first (then by id); the first no rule skips decides:
/// 1. inside its dates;
/// 2. its conditions, with the product the request names (the subscription's product now) and the rest from the
///    stored state (tenure, expiration intent, storefront and billing plan are unknown, so unmet, for a subscriber
///    Reclaim has not seen a notification of: Apple's realtime request names no billing plan), and an offer for the
///    subscription's billing plan;
/// 3. Apple's own win-back offers, when the campaign stands aside for them;
/// 4. a decision of the campaign within its cooldown stands: the request repeats it (same arm or holdout);
/// 5. the maximum of answered decisions per subscriber;
/// 6. the holdout (``Holdout``), else the arm (``VariantAssignment``: the earlier arm while it is configured);
/// 7. an arm that answers with a promotional offer is held back when the app's ``DiscountBudget`` is spent.
/// A held-out, shadow or switched-off (`reclaim campaigns pause`, checked after rules 1–3) decision answers `{}`;
/// lower campaigns do not answer that subscriber instead.
public enum CancelSheetEvaluator {
    /// What the realtime request says, and when it is answered.
    public struct Request: Sendable, Equatable {
        public var bundleId: String
        public var originalTransactionId: String
        /// The subscription's product now, from Apple's request.
        public var productId: String
        public var now: Date

        public init(bundleId: String, originalTransactionId: String, productId: String, now: Date) {
            self.bundleId = bundleId
            self.originalTransactionId = originalTransactionId
            self.productId = productId
            self.now = now
        }
    }

    /// An earlier cancel-sheet decision (a first one, not a repeat) for the same subscriber.
    public struct PastDecision: Sendable, Equatable {
        public var id: UUID
        public var campaignId: String
        public var outcome: CancelSheetDecision.Outcome
        public var variantId: String?
        public var decidedAt: Date

        public init(id: UUID, campaignId: String, outcome: CancelSheetDecision.Outcome, variantId: String?, decidedAt: Date) {
            self.id = id
            self.campaignId = campaignId
            self.outcome = outcome
            self.variantId = variantId
            self.decidedAt = decidedAt
        }
    }

    /// The deciding campaign's decision (nil when none decides), and every campaign skipped before it with why.
    public static func decide(
        campaigns: [CancelSheetCampaign],
        request: Request,
        state known: SubscriptionState?,
        earlier: [PastDecision],
        paused: Set<String>,
        discounts: [DiscountBudget.Spent] = []
    ) -> (decision: CancelSheetDecision?, skipped: [(campaignId: String, reason: String)]) {
        var state = known ?? SubscriptionState(bundleId: request.bundleId, environment: "", originalTransactionId: request.originalTransactionId)
        state.productId = request.productId
        let candidates =
            campaigns
            .filter { $0.bundleId == request.bundleId }
            .sorted { ($0.priority, $1.id) > ($1.priority, $0.id) }
        var skipped: [(campaignId: String, reason: String)] = []
        for campaign in candidates {
            if let reason = skipReason(campaign, state: state, request: request) {
                skipped.append((campaign.id, reason))
                continue
            }
            // Switched off: the subscribers it would take get `{}` (Apple's own fallback), as under a holdout, and
            // nothing is recorded; lower campaigns do not take them instead.
            if paused.contains(campaign.id) {
                let reason = "switched off: reclaim campaigns pause"
                return (CancelSheetDecision(campaign: campaign, outcome: .switchedOff, variant: nil, reason: reason, repeatOf: nil), skipped)
            }
            let mine = earlier.filter { $0.campaignId == campaign.id }.sorted { $0.decidedAt < $1.decidedAt }
            if let last = mine.last, request.now < last.decidedAt.addingTimeInterval(campaign.cooldown),
                let repeated = repeatDecision(of: last, campaign: campaign, plan: state.billingPlanType)
            {
                return (withinBudget(repeated, discounts: discounts, plan: state.billingPlanType, at: request.now), skipped)
            }
            if let maximum = campaign.maxOffersPerSubscriber {
                let answered = mine.filter { $0.outcome == .answered }.count
                if answered >= maximum {
                    skipped.append((campaign.id, "maximum reached: \(answered) of \(maximum) answers of this campaign already given"))
                    continue
                }
            }
            var decision = firstDecision(
                campaign,
                request: request,
                plan: state.billingPlanType,
                earlierArm: mine.last { $0.outcome != .heldOut }?.variantId
            )
            decision.follows = mine.last?.id
            return (withinBudget(decision, discounts: discounts, plan: state.billingPlanType, at: request.now), skipped)
        }
        return (nil, skipped)
    }

    /// Rules 1–3: nil when none says no.
    private static func skipReason(_ campaign: CancelSheetCampaign, state: SubscriptionState, request: Request) -> String? {
        campaign.basics.outsideDates(request.now) ?? campaign.basics.unqualified(state, at: request.now, now: request.now)
    }

    /// Rule 7: a promotional-offer answer the app's discount budget does not allow is held back (answered `{}`),
    /// recorded with the budget's reason. Messages and switch-plan answers are not discounts.
    private static func withinBudget(
        _ decision: CancelSheetDecision,
        discounts: [DiscountBudget.Spent],
        plan: String?,
        at time: Date
    ) -> CancelSheetDecision {
        guard decision.outcome == .answered, case .offer? = decision.variant?.answer, let budget = decision.campaign.discountBudget,
            let reason = budget.forPlan(plan).exhausted(by: discounts, at: time)
        else { return decision }
        var held = decision
        held.outcome = .heldBack
        held.reason = reason
        return held
    }

    /// Rule 4: the earlier decision again, unless its arm left the config (then a new decision is made).
    private static func repeatDecision(of last: PastDecision, campaign: CancelSheetCampaign, plan: String?) -> CancelSheetDecision? {
        let since =
            "repeats decision \(last.id.uuidString.lowercased()) of \(CampaignEvaluator.iso(last.decidedAt)) (cooldown \(CampaignEvaluator.duration(campaign.cooldown)))"
        switch last.outcome {
        case .heldOut:
            return CancelSheetDecision(campaign: campaign, outcome: .heldOut, variant: nil, reason: since, repeatOf: last.id)
        case .switchedOff, .tooLate:
            // A decision whose answer did not leave in time was never shown: a new first decision is made (the same
            // arm, by the same hash), and it is the one the statistics count.
            return nil
        case .answered, .heldBack:
            guard let variant = campaign.variants.first(where: { $0.id == (last.variantId ?? "") })?.forPlan(plan) else { return nil }
            return CancelSheetDecision(campaign: campaign, outcome: .answered, variant: variant, reason: since, repeatOf: last.id)
        // (a held-back decision is repeated as answered, and the budget decides again)
        }
    }

    /// Rule 6.
    private static func firstDecision(_ campaign: CancelSheetCampaign, request: Request, plan: String?, earlierArm: String?) -> CancelSheetDecision {
        if let reason = campaign.basics.heldOut(request.originalTransactionId) {
            return CancelSheetDecision(campaign: campaign, outcome: .heldOut, variant: nil, reason: reason, repeatOf: nil)
        }
        let variant = campaign.basics.arm(for: request.originalTransactionId, earlier: earlierArm, plan: plan)
        let arm = variant.map { $0.id.isEmpty ? "" : " (variant \($0.id))" } ?? ""
        return CancelSheetDecision(campaign: campaign, outcome: .answered, variant: variant, reason: "eligible\(arm)", repeatOf: nil)
    }
}

/// A cancel-sheet campaign's decision for one realtime request.
public struct CancelSheetDecision: Sendable, Equatable {
    public enum Outcome: String, Sendable, CaseIterable {
        /// Answered with the arm's answer (or, for a shadow campaign, recorded as if it had been).
        case answered
        /// In the campaign's control group: answered `{}`, so Apple's own fallback runs.
        case heldOut = "held_out"
        /// Its arm's promotional offer would exceed the app's discount budget: answered `{}`, recorded with the reason.
        case heldBack = "held_back"
        /// The campaign is switched off: answered `{}`, and not recorded.
        case switchedOff = "switched_off"
        /// Recorded, but its answer did not leave within the budget: Apple was answered `{}`. Counted in no arm of the
        /// statistics; the subscriber's next request makes a new first decision.
        case tooLate = "too_late"
    }

    public var campaign: CancelSheetCampaign
    public var outcome: Outcome
    /// For `answered`: the arm (a campaign without variants has one, with the empty id).
    public var variant: CampaignVariant?
    public var reason: String
    /// The earlier decision this request repeats (within the campaign's cooldown); nil for a first decision.
    public var repeatOf: UUID?
    /// For a first decision: the campaign's previous first decision for this subscriber (nil: none). Recorded, it makes
    /// the record unique: of concurrent requests that each decided first after the same decision, one is recorded
    /// and the others repeat it.
    public var follows: UUID?

    public init(campaign: CancelSheetCampaign, outcome: Outcome, variant: CampaignVariant?, reason: String, repeatOf: UUID?, follows: UUID? = nil) {
        self.campaign = campaign
        self.outcome = outcome
        self.variant = variant
        self.reason = reason
        self.repeatOf = repeatOf
        self.follows = follows
    }

    /// What Apple is answered with: nothing for the holdout and for a shadow campaign.
    public var answer: CancelSheetAnswer? {
        guard outcome == .answered, !campaign.shadow else { return nil }
        return variant?.answer
    }

    /// What the arm answers (or would have: shadow, held back), recorded on the decision.
    public var armAnswer: CancelSheetAnswer? { outcome == .answered || outcome == .heldBack ? variant?.answer : nil }
}
