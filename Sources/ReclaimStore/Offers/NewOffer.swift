import Foundation
import ReclaimDomain

/// An offer to insert: who, which campaign or grant, and its signatures.
public struct NewOffer: Sendable {
    public var id: UUID
    public var decisionId: UUID?
    public var grantId: UUID?
    public var bundleId: String
    public var environment: String
    public var originalTransactionId: String
    public var appAccountToken: UUID?
    public var campaignId: String
    public var sourceNotificationUUID: UUID?
    public var triggeredAt: Date
    public var priority: Int
    public var productId: String
    public var offerIdentifier: String
    public var signed: SignedOffer
    public var deliverableUntil: Date

    public init(
        id: UUID = UUID(),
        decisionId: UUID?,
        grantId: UUID? = nil,
        bundleId: String,
        environment: String,
        originalTransactionId: String,
        appAccountToken: UUID?,
        campaignId: String,
        sourceNotificationUUID: UUID?,
        triggeredAt: Date,
        priority: Int,
        productId: String,
        offerIdentifier: String,
        signed: SignedOffer,
        deliverableUntil: Date
    ) {
        self.id = id
        self.decisionId = decisionId
        self.grantId = grantId
        self.bundleId = bundleId
        self.environment = environment
        self.originalTransactionId = originalTransactionId
        self.appAccountToken = appAccountToken
        self.campaignId = campaignId
        self.sourceNotificationUUID = sourceNotificationUUID
        self.triggeredAt = triggeredAt
        self.priority = priority
        self.productId = productId
        self.offerIdentifier = offerIdentifier
        self.signed = signed
        self.deliverableUntil = deliverableUntil
    }
}
