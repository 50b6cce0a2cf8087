import Foundation

/// A win-back or retention campaign: which notification triggers it, who qualifies, and the offer.
///
/// Built from the config by the service layer; evaluated by ``CampaignEvaluator``.
public struct Campaign: Sendable, Equatable {
    public var id: String
    public var bundleId: String
    public var trigger: CampaignTrigger
    public var conditions: CampaignConditions
    /// The offers it makes: one (with the empty id) unless the campaign is an experiment with `variants`.
    public var variants: [CampaignVariant]
    /// The subscription product of its (first) offer.
    public var productId: String { variants.first?.productId ?? "" }
    /// The promotional offer id in App Store Connect of its (first) offer.
    public var offerIdentifier: String { variants.first?.offerIdentifier ?? "" }
    /// How long after the triggering notification the offer is handed out.
    public var deliverableFor: TimeInterval
    /// Minimum time between two decisions (offered or held out) of this campaign for one subscriber.
    public var cooldown: TimeInterval
    /// Most offers of this campaign one subscriber ever gets; nil for no limit.
    public var maxOffersPerSubscriber: Int?
    /// Share of eligible subscribers deliberately given nothing, 0…100.
    public var holdoutPercent: Int
    /// Higher wins when campaigns compete for the one live offer a subscriber may have.
    public var priority: Int
    /// Notifications signed before `startsAt` or at or after `endsAt` do not trigger the campaign.
    public var startsAt: Date?
    public var endsAt: Date?
    /// How long after its trigger the campaign fires (0: at once). A delayed campaign is re-checked when it fires,
    /// against the subscriber's state then (``CampaignEvaluator/fire(_:state:history:triggeredAt:now:)``).
    public var delay: TimeInterval
    /// How long after its trigger a delayed campaign may still fire (a backlog, workers down); past it, it is skipped.
    public var window: TimeInterval
    /// Skip subscribers for whom Apple already lists win-back offers (`eligibleWinBackOfferIds`): Apple shows
    /// those itself, and a second discount would compete with it.
    public var standAsideForWinBack: Bool
    /// Cancel sheet: how long after a decision its save outcome is settled (auto-renew on or off then).
    public var saveWindow: TimeInterval
    /// The app's discount budget (``DiscountBudget``); nil for none.
    public var discountBudget: DiscountBudget?
    /// A cancel-sheet campaign that records what it would have answered and answers `{}` (``CancelSheetEvaluator``).
    public var shadow: Bool
    /// A trigger that arrives while a 12-month commitment runs and will not renew is decided this long before the
    /// commitment ends, not at once: the customer keeps paying until then (``CampaignEvaluator/commitmentDeferrals``).
    public var commitmentLead: TimeInterval

    public init(
        id: String,
        bundleId: String,
        trigger: CampaignTrigger,
        conditions: CampaignConditions = CampaignConditions(),
        productId: String,
        offerIdentifier: String,
        deliverableFor: TimeInterval = 7 * 86_400,
        cooldown: TimeInterval = 90 * 86_400,
        maxOffersPerSubscriber: Int? = nil,
        holdoutPercent: Int = 0,
        priority: Int = 0,
        startsAt: Date? = nil,
        endsAt: Date? = nil,
        standAsideForWinBack: Bool = true,
        variants: [CampaignVariant]? = nil,
        delay: TimeInterval = 0,
        window: TimeInterval? = nil,
        shadow: Bool = false,
        discountBudget: DiscountBudget? = nil,
        saveWindow: TimeInterval = 30 * 86_400,
        commitmentLead: TimeInterval = Campaign.defaultCommitmentLead
    ) {
        self.commitmentLead = commitmentLead
        self.id = id
        self.bundleId = bundleId
        self.trigger = trigger
        self.conditions = conditions
        self.variants = variants ?? [CampaignVariant(id: "", productId: productId, offerIdentifier: offerIdentifier)]
        self.delay = delay
        self.window = window ?? delay + 86_400
        self.deliverableFor = deliverableFor
        self.cooldown = cooldown
        self.maxOffersPerSubscriber = maxOffersPerSubscriber
        self.holdoutPercent = holdoutPercent
        self.priority = priority
        self.startsAt = startsAt
        self.endsAt = endsAt
        self.standAsideForWinBack = standAsideForWinBack
        self.shadow = shadow
        self.discountBudget = discountBudget
        self.saveWindow = saveWindow
    }

    /// Why a subscription of `plan` gets nothing from this campaign: an arm names offers per billing plan, none for
    /// this one and none for any plan. nil when every arm has an offer for it.
    public func noOffer(forPlan plan: String?) -> String? {
        guard let arm = variants.first(where: { $0.forPlan(plan) == nil }) else { return nil }
        let named = arm.offerIdentifiersByPlan.keys.sorted().joined(separator: ", ")
        return "no offer for billing plan \(plan ?? "unknown"): the campaign's offer names \(named) only"
    }

    /// `commitmentLead`'s default: two weeks before the commitment ends.
    public static let defaultCommitmentLead: TimeInterval = 14 * 86_400
}
