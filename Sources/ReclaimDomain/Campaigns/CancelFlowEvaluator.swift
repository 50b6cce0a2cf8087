import Foundation

/// The cancel flow's rules: which ``CancelFlowCampaign`` answers the app's cancel intent, and with which arm. Its own
/// rules come first, then the cancel sheet's engine decides (``CancelSheetEvaluator``: dates, conditions, standing
/// aside, the first decision within the cooldown repeated, the maximum, the holdout, the arm, the discount budget), so
/// both doors decide alike. Pure: no I/O, no clock, no randomness.
///
/// The flow's own rules, per campaign, highest priority first:
/// 1. the subscriber has or had a subscription in the app (Apple's condition for promotional offers), and no parent or
///    guardian withdrew consent for it (RESCIND_CONSENT): else no campaign answers;
/// 2. the survey answer is one the campaign takes (`reasons`; `none` for no answer);
/// 3. the app can show every arm's answer (`canShow`): a campaign whose arm it could not show would skew the arms.
public enum CancelFlowEvaluator {
    public struct Request: Sendable, Equatable {
        public var bundleId: String
        public var originalTransactionId: String
        /// The survey answer; nil when the subscriber gave none.
        public var reason: String?
        public var canShow: Set<CancelFlowAnswerKind>
        public var now: Date

        public init(bundleId: String, originalTransactionId: String, reason: String?, canShow: Set<CancelFlowAnswerKind>, now: Date) {
            self.bundleId = bundleId
            self.originalTransactionId = originalTransactionId
            self.reason = reason
            self.canShow = canShow
            self.now = now
        }
    }

    /// The deciding campaign's decision (nil when none decides), and every campaign skipped before it with why.
    public static func decide(
        campaigns: [CancelFlowCampaign],
        request: Request,
        state: SubscriptionState,
        earlier: [CancelSheetEvaluator.PastDecision],
        paused: Set<String>,
        discounts: [DiscountBudget.Spent] = []
    ) -> (decision: CancelFlowDecision?, skipped: [(campaignId: String, reason: String)]) {
        let mine = campaigns.filter { $0.bundleId == request.bundleId }
        if let reason = subscriberReason(state) { return (nil, mine.map { ($0.id, reason) }) }
        var skipped: [(campaignId: String, reason: String)] = []
        var eligible: [CancelFlowCampaign] = []
        for campaign in mine {
            if let reason = skipReason(campaign, request: request) { skipped.append((campaign.id, reason)) } else { eligible.append(campaign) }
        }
        let (decision, engineSkipped) = CancelSheetEvaluator.decide(
            campaigns: eligible.map { CancelSheetCampaign($0.basics, saveWindow: $0.saveWindow) },
            request: .init(
                bundleId: request.bundleId,
                originalTransactionId: request.originalTransactionId,
                productId: state.productId ?? "",
                now: request.now
            ),
            state: state,
            earlier: earlier,
            paused: paused,
            discounts: discounts
        )
        // In priority order, as the engine reports them after the flow's own.
        skipped += engineSkipped
        guard let decision, let campaign = eligible.first(where: { $0.id == decision.campaign.id }) else { return (nil, skipped) }
        return (
            CancelFlowDecision(
                campaign: campaign,
                outcome: decision.outcome,
                variant: decision.variant,
                reason: decision.reason,
                repeatOf: decision.repeatOf,
                follows: decision.follows
            ), skipped
        )
    }

    /// Rule 1.
    static func subscriberReason(_ state: SubscriptionState) -> String? {
        if !state.hasOrHadSubscription { return "no subscription: Apple offers promotional offers only to subscribers who have or had one" }
        if let rescinded = state.consentRescindedAt {
            return "consent rescinded: a parent or guardian withdrew consent for the app \(CampaignEvaluatorFormat.iso(rescinded)) (RESCIND_CONSENT)"
        }
        return nil
    }

    /// Rules 2 and 3.
    static func skipReason(_ campaign: CancelFlowCampaign, request: Request) -> String? {
        let answer = request.reason ?? CancelFlowCampaign.noAnswer
        if let reasons = campaign.reasons, !reasons.contains(answer) {
            return "reason not taken: \(answer) is not one of \(reasons.sorted().joined(separator: ", "))"
        }
        let kinds = Set(campaign.variants.compactMap { $0.answer.map(CancelFlowAnswerKind.init) })
        if let missing = kinds.subtracting(request.canShow).map(\.rawValue).sorted().first {
            return "the app cannot show a \(missing) answer, which an arm of this campaign gives"
        }
        return nil
    }
}

/// A cancel-flow campaign's decision for one cancel intent.
public struct CancelFlowDecision: Sendable, Equatable {
    public var campaign: CancelFlowCampaign
    /// answered, heldOut (the control group: the app shows nothing), heldBack (the arm's offer would exceed the app's
    /// discount budget: nothing shown) or switchedOff (`reclaim campaigns pause`: nothing shown, not recorded).
    public var outcome: CancelSheetDecision.Outcome
    /// For answered and held back: the arm.
    public var variant: CampaignVariant?
    public var reason: String
    /// The earlier first decision this one repeats (within the campaign's cooldown); nil for a first decision.
    public var repeatOf: UUID?
    /// For a first decision: the campaign's previous first decision for this subscriber.
    public var follows: UUID?

    public init(
        campaign: CancelFlowCampaign,
        outcome: CancelSheetDecision.Outcome,
        variant: CampaignVariant?,
        reason: String,
        repeatOf: UUID?,
        follows: UUID? = nil
    ) {
        self.campaign = campaign
        self.outcome = outcome
        self.variant = variant
        self.reason = reason
        self.repeatOf = repeatOf
        self.follows = follows
    }

    /// What the app is answered with: the arm's answer when answered, else nothing.
    public var answer: CancelSheetAnswer? { outcome == .answered ? variant?.answer : nil }
}
