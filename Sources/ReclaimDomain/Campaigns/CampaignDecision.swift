import Foundation

/// What a campaign decided for one subscriber on one notification, and why in words (kept on the
/// decision row, so a dashboard can say why someone got nothing).
public struct CampaignDecision: Sendable, Equatable {
    public enum Outcome: String, Sendable, CaseIterable {
        /// Sign and issue the offer.
        case offered
        /// Eligible, but in the campaign's control group: no offer, counted for lift.
        case heldOut = "held_out"
        /// A rule said no; `reason` says which.
        case skipped
    }

    public var campaign: NotificationCampaign
    public var outcome: Outcome
    public var reason: String
    /// For `offered`: the live offer of lower priority this one replaces (to be withdrawn).
    public var supersedes: UUID?
    /// For `offered`: the end of the delivery window (trigger time plus the campaign's deliverableFor).
    public var deliverableUntil: Date
    /// For `offered`: the variant whose offer is issued (``VariantAssignment``).
    public var variant: CampaignVariant?

    public init(
        campaign: NotificationCampaign,
        outcome: Outcome,
        reason: String,
        supersedes: UUID? = nil,
        deliverableUntil: Date,
        variant: CampaignVariant? = nil
    ) {
        self.campaign = campaign
        self.outcome = outcome
        self.reason = reason
        self.supersedes = supersedes
        self.deliverableUntil = deliverableUntil
        self.variant = variant
    }
}
