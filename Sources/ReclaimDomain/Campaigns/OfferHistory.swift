import Foundation

/// What a subscriber has had from Reclaim so far: the campaign rules' memory.
public struct OfferHistory: Sendable, Equatable {
    /// An earlier decision of a campaign for this subscriber.
    public struct PastDecision: Sendable, Equatable {
        public var campaignId: String
        public var outcome: CampaignDecision.Outcome
        /// signedDate of the notification that triggered it.
        public var triggeredAt: Date
        /// The variant it offered; nil for a campaign without variants, or a decision that offered nothing.
        public var variantId: String?

        public init(campaignId: String, outcome: CampaignDecision.Outcome, triggeredAt: Date, variantId: String? = nil) {
            self.campaignId = campaignId
            self.outcome = outcome
            self.triggeredAt = triggeredAt
            self.variantId = variantId
        }
    }

    /// The subscriber's live (ready or delivered) offer; Apple allows one at a time.
    public struct LiveOffer: Sendable, Equatable {
        public var id: UUID
        public var campaignId: String
        public var priority: Int
        public var productId: String
        public var offerIdentifier: String
        public var triggeredAt: Date
        /// Grants are incentives the operator chose; subscribers coming back do not withdraw them.
        public var isGrant: Bool

        public init(id: UUID, campaignId: String, priority: Int, productId: String, offerIdentifier: String, triggeredAt: Date, isGrant: Bool = false)
        {
            self.id = id
            self.campaignId = campaignId
            self.priority = priority
            self.productId = productId
            self.offerIdentifier = offerIdentifier
            self.triggeredAt = triggeredAt
            self.isGrant = isGrant
        }
    }

    public var decisions: [PastDecision]
    public var liveOffer: LiveOffer?
    /// The subscriber's discounted redemptions through every door, for the app's ``DiscountBudget``.
    public var discounts: [DiscountBudget.Spent]
    /// The offer codes this subscriber can be given (``OfferCodes/skipReason(_:context:)``); nil where no one asked
    /// (`reclaim campaigns simulate` has no pools: codes are taken as available there).
    public var codes: OfferCodes.Context?

    public init(
        decisions: [PastDecision] = [],
        liveOffer: LiveOffer? = nil,
        discounts: [DiscountBudget.Spent] = [],
        codes: OfferCodes.Context? = nil
    ) {
        self.decisions = decisions
        self.liveOffer = liveOffer
        self.discounts = discounts
        self.codes = codes
    }
}
