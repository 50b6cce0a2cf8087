import Crypto
import Foundation

/// One offer a campaign may make: an experiment's arm. A campaign without `variants` has one, with the empty id.
public struct CampaignVariant: Sendable, Equatable {
    /// Recorded on every decision and offer; stable across config reloads as long as it stays.
    public var id: String
    public var productId: String
    /// The offer for a subscription of any plan; empty when ``offerIdentifiersByPlan`` names every plan it serves.
    public var offerIdentifier: String
    /// The offer for each billing plan (`MONTHLY`, `BILLED_UPFRONT`: Apple's `billingPlanType`), before
    /// ``offerIdentifier``. Apple: "Subscription offers—including introductory offers, promotional offers, win-back
    /// offers, and offer codes—are specific to each billing plan."
    public var offerIdentifiersByPlan: [String: String]
    /// Relative share of new subscribers, at least 1.
    public var weight: Int
    /// A cancel-sheet campaign's arm: what it answers Apple with (nil for a notification campaign's offer).
    public var answer: CancelSheetAnswer?
    /// An arm that hands out offer codes (``OfferCodes``): the reference name of the offer whose pool it takes a code
    /// from, in place of a promotional offer to sign (``offerIdentifier`` is then empty).
    public var offerCodes: String?

    public init(
        id: String,
        productId: String,
        offerIdentifier: String,
        offerIdentifiersByPlan: [String: String] = [:],
        weight: Int = 1,
        answer: CancelSheetAnswer? = nil,
        offerCodes: String? = nil
    ) {
        self.id = id
        self.productId = productId
        self.offerIdentifier = offerIdentifier
        self.offerIdentifiersByPlan = offerIdentifiersByPlan
        self.weight = weight
        self.answer = answer
        self.offerCodes = offerCodes
    }

    /// The arm as a subscription of `plan` gets it: its offer is the plan's (a promotional-offer answer's too), else
    /// the one for any plan; nil when it has none for this plan (an unknown plan takes the one for any plan only).
    public func forPlan(_ plan: String?) -> CampaignVariant? {
        guard !offerIdentifiersByPlan.isEmpty else { return self }
        guard let offer = plan.flatMap({ offerIdentifiersByPlan[$0] }) ?? (offerIdentifier.isEmpty ? nil : offerIdentifier) else { return nil }
        var resolved = self
        resolved.offerIdentifier = offer
        if case .offer(let product, _, let message, let signature)? = answer {
            resolved.answer = .offer(productId: product, offerIdentifier: offer, messageIdentifier: message, signature: signature)
        }
        return resolved
    }
}

/// Which variant a subscriber gets: the one an earlier decision of the campaign gave them, while it is still
/// configured (so a changed weight moves only new subscribers), else one drawn by weight from a stable hash of
/// the subscriber and campaign, independent of the holdout's.
public enum VariantAssignment {
    public static func variant(
        of variants: [CampaignVariant],
        originalTransactionId: String,
        campaignId: String,
        earlier: String?
    ) -> CampaignVariant? {
        if let earlier, let kept = variants.first(where: { $0.id == earlier }) { return kept }
        let total = variants.reduce(0) { $0 + max(0, $1.weight) }
        guard total > 0 else { return variants.first }
        var point = Int(bucket(originalTransactionId: originalTransactionId, campaignId: campaignId) % UInt64(total))
        for variant in variants where variant.weight > 0 {
            if point < variant.weight { return variant }
            point -= variant.weight
        }
        return variants.last
    }

    /// SHA-256 of `originalTransactionId NUL campaignId NUL "variant"`, first 8 bytes big-endian: another draw
    /// than ``Holdout/bucket(originalTransactionId:campaignId:)``, so arms and control group are independent.
    public static func bucket(originalTransactionId: String, campaignId: String) -> UInt64 {
        let digest = SHA256.hash(data: Data((originalTransactionId + "\u{0}" + campaignId + "\u{0}variant").utf8))
        return digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }
}
