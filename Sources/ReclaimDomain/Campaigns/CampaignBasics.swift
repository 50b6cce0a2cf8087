import Foundation

/// What every kind of campaign has, and the rules every kind applies the same way: who it is for (app, conditions,
/// dates), what it gives (one offer or an experiment's arms), and how often (holdout, cooldown, maximum, priority,
/// the app's discount budget). A kind (``CampaignKind``) holds these beside its own fields, and its evaluator adds
/// its own rules (docs/decisions/0007-a-type-per-campaign-kind.md).
public struct CampaignBasics: Sendable, Equatable {
    public var id: String
    public var bundleId: String
    public var conditions: CampaignConditions
    /// The offers (or answers) it makes: one (with the empty id) unless the campaign is an experiment with `variants`.
    public var variants: [CampaignVariant]
    /// Minimum time between two decisions (offered or held out) of this campaign for one subscriber.
    public var cooldown: TimeInterval
    /// Most offers (answers) of this campaign one subscriber ever gets; nil for no limit.
    public var maxOffersPerSubscriber: Int?
    /// Share of eligible subscribers deliberately given nothing, 0…100.
    public var holdoutPercent: Int
    /// Higher wins when campaigns compete for a subscriber.
    public var priority: Int
    /// Nothing before `startsAt`, nothing at or after `endsAt`.
    public var startsAt: Date?
    public var endsAt: Date?
    /// Skip subscribers for whom Apple already lists win-back offers (`eligibleWinBackOfferIds`): Apple shows
    /// those itself, and a second discount would compete with it.
    public var standAsideForWinBack: Bool
    /// The app's discount budget (``DiscountBudget``); nil for none.
    public var discountBudget: DiscountBudget?

    public init(
        id: String,
        bundleId: String,
        conditions: CampaignConditions = CampaignConditions(),
        variants: [CampaignVariant],
        cooldown: TimeInterval = 90 * 86_400,
        maxOffersPerSubscriber: Int? = nil,
        holdoutPercent: Int = 0,
        priority: Int = 0,
        startsAt: Date? = nil,
        endsAt: Date? = nil,
        standAsideForWinBack: Bool = true,
        discountBudget: DiscountBudget? = nil
    ) {
        self.id = id
        self.bundleId = bundleId
        self.conditions = conditions
        self.variants = variants
        self.cooldown = cooldown
        self.maxOffersPerSubscriber = maxOffersPerSubscriber
        self.holdoutPercent = holdoutPercent
        self.priority = priority
        self.startsAt = startsAt
        self.endsAt = endsAt
        self.standAsideForWinBack = standAsideForWinBack
        self.discountBudget = discountBudget
    }

    /// The subscription product of its (first) offer.
    public var productId: String { variants.first?.productId ?? "" }
    /// The promotional offer id in App Store Connect of its (first) offer.
    public var offerIdentifier: String { variants.first?.offerIdentifier ?? "" }

    /// Why a subscription of `plan` gets nothing from this campaign: an arm names offers per billing plan, none for
    /// this one and none for any plan. nil when every arm has an offer for it.
    public func noOffer(forPlan plan: String?) -> String? {
        guard let arm = variants.first(where: { $0.forPlan(plan) == nil }) else { return nil }
        let named = arm.offerIdentifiersByPlan.keys.sorted().joined(separator: ", ")
        return "no offer for billing plan \(plan ?? "unknown"): the campaign's offer names \(named) only"
    }

    /// Why `at` lies outside the campaign's dates, or nil.
    public func outsideDates(_ at: Date) -> String? {
        if let startsAt, at < startsAt { return "not started: the campaign starts \(CampaignEvaluatorFormat.iso(startsAt))" }
        if let endsAt, at >= endsAt { return "ended: the campaign ended \(CampaignEvaluatorFormat.iso(endsAt))" }
        return nil
    }

    /// Why the subscriber does not qualify, or nil: the conditions, an offer for the subscription's billing plan,
    /// and Apple's own win-back offers when the campaign stands aside for them.
    public func unqualified(_ state: SubscriptionState, at: Date, now: Date) -> String? {
        if let unmet = conditions.unmet(by: state, at: at, now: now) { return "condition not met: \(unmet)" }
        if let none = noOffer(forPlan: state.billingPlanType) { return none }
        if standAsideForWinBack, !state.eligibleWinBackOfferIds.isEmpty {
            return "standing aside: Apple lists win-back offers \(state.eligibleWinBackOfferIds.joined(separator: ", ")) for this subscriber"
        }
        return nil
    }

    /// Why the subscriber is held out (in the campaign's control group, ``Holdout``), or nil.
    public func heldOut(_ originalTransactionId: String) -> String? {
        let bucket = Holdout.bucket(originalTransactionId: originalTransactionId, campaignId: id)
        guard bucket < holdoutPercent * (Holdout.buckets / 100) else { return nil }
        return "held out: bucket \(bucket) of \(Holdout.buckets) is in the \(holdoutPercent)% control group"
    }

    /// The arm a subscriber gets (the earlier one while it is configured, else drawn by weight: ``VariantAssignment``),
    /// as a subscription of `plan` gets it.
    public func arm(for originalTransactionId: String, earlier: String?, plan: String?) -> CampaignVariant? {
        VariantAssignment.variant(of: variants, originalTransactionId: originalTransactionId, campaignId: id, earlier: earlier)?.forPlan(plan)
    }
}

/// A kind of campaign: its own fields beside the ``CampaignBasics`` every kind has (read through it:
/// `campaign.priority` is `campaign.basics.priority`). Each kind has its own evaluator, which takes that kind only.
///
/// A new kind: its type (this protocol), its evaluator, its config keys, its docs and its test
/// (docs/decisions/0007-a-type-per-campaign-kind.md).
@dynamicMemberLookup
public protocol CampaignKind: Sendable {
    var basics: CampaignBasics { get set }
    /// What the config's `trigger` says of it, as `reclaim.campaigns.trigger` and `campaigns check` write it.
    var triggerName: String { get }
    /// How long an offer it issues stays deliverable: `reclaim.campaigns.deliverable_for`, and `deliverable 7d` in
    /// `campaigns check`.
    var deliverableFor: TimeInterval { get }
    /// The kind's own settings as `campaigns check` lists them after the maximum (`shadow (answers {})`).
    var checkNotes: [String] { get }
}

extension CampaignKind {
    public var checkNotes: [String] { [] }

    public subscript<Value>(dynamicMember keyPath: KeyPath<CampaignBasics, Value>) -> Value { basics[keyPath: keyPath] }

    public subscript<Value>(dynamicMember keyPath: WritableKeyPath<CampaignBasics, Value>) -> Value {
        get { basics[keyPath: keyPath] }
        set { basics[keyPath: keyPath] = newValue }
    }
}

extension Array where Element == any CampaignKind {
    /// The campaigns of one kind, in config order.
    public func of<Kind: CampaignKind>(_ kind: Kind.Type) -> [Kind] { compactMap { $0 as? Kind } }
}
