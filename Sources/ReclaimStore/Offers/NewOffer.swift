import Foundation
import ReclaimDomain

/// An offer to insert (``OfferInsert``): which campaign or grant it comes from, what it offers and its
/// signatures. Whose it is and what triggered it are the statement's, shared by all its offers.
public struct NewOffer: Sendable {
    public var id: UUID
    /// The campaign decision that issued it, or
    public var decisionId: UUID?
    /// the grant that did.
    public var grantId: UUID?
    /// The campaign's id, or the grant's `campaign` label.
    public var campaignId: String
    public var priority: Int
    public var productId: String
    public var offerIdentifier: String
    public var signed: SignedOffer
    public var deliverableUntil: Date
    /// The campaign variant it offers; nil for a campaign without variants, and for grants.
    public var variantId: String?
    /// The cancel-flow decision that issued it (``CancelFlowStore``); nil for a campaign's and a grant's.
    public var cancelFlowDecisionId: UUID?

    public init(
        id: UUID = UUID(),
        decisionId: UUID? = nil,
        grantId: UUID? = nil,
        campaignId: String,
        priority: Int,
        productId: String,
        offerIdentifier: String,
        signed: SignedOffer,
        deliverableUntil: Date,
        variantId: String? = nil,
        cancelFlowDecisionId: UUID? = nil
    ) {
        self.id = id
        self.decisionId = decisionId
        self.grantId = grantId
        self.campaignId = campaignId
        self.priority = priority
        self.productId = productId
        self.offerIdentifier = offerIdentifier
        self.signed = signed
        self.deliverableUntil = deliverableUntil
        self.variantId = variantId
        self.cancelFlowDecisionId = cancelFlowDecisionId
    }
}
