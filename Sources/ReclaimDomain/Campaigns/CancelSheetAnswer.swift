import Foundation

/// What a cancel-sheet campaign's arm answers Apple's Retention Messaging realtime request with: one of the
/// mutually exclusive keys of Apple's `RealtimeResponseBody` ("A response you provide to choose, in real time, a
/// retention message the system displays to the customer": `message`, `alternateProduct`, `promotionalOffer`,
/// `advancedCommerceInfo`). The fourth needs the Advanced Commerce API, which Reclaim does not sign for.
public enum CancelSheetAnswer: Sendable, Equatable {
    /// `message`: "A retention message that's text-based and can include an optional image."
    case message(messageIdentifier: String)
    /// `alternateProduct`: "A retention message with a switch-plan option" — Apple asks to "Choose an alternative
    /// subscription from the same subscription group". `billingPlanType` is Retention Messaging 1.5's ("Added the
    /// new property billingPlanType to alternateProduct to support monthly subscriptions with 12-month commitments").
    case switchTo(productId: String, messageIdentifier: String, billingPlanType: BillingPlanType?)
    /// `promotionalOffer`: "A retention message that includes a promotional offer", signed when answered.
    case offer(productId: String, offerIdentifier: String, messageIdentifier: String, signature: OfferSignatureFormat)

    /// App Store Server API's `billingPlanType` values (`BILLED_UPFRONT`, `MONTHLY`).
    public enum BillingPlanType: String, Sendable, CaseIterable {
        case billedUpfront = "BILLED_UPFRONT"
        case monthly = "MONTHLY"
    }

    /// Which of `promotionalOffer`'s signatures to send. Apple: "For new implementations, consider using the
    /// promotionalOfferSignatureV2 signature, which is easier to generate." Nothing in Apple's request chooses, so
    /// the campaign's config does; V2 unless it asks for V1.
    public enum OfferSignatureFormat: String, Sendable, CaseIterable {
        case v2, v1
    }

    /// `message`, `alternate_product` or `promotional_offer`: the answer's kind as recorded and counted.
    public var kind: String {
        switch self {
        case .message: "message"
        case .switchTo: "alternate_product"
        case .offer: "promotional_offer"
        }
    }

    public var messageIdentifier: String {
        switch self {
        case .message(let id), .switchTo(_, let id, _), .offer(_, _, let id, _): id
        }
    }

    /// The product it names: the plan to switch to, or the offer's subscription; nil for a message.
    public var productId: String? {
        switch self {
        case .message: nil
        case .switchTo(let product, _, _), .offer(let product, _, _, _): product
        }
    }

    public var offerIdentifier: String? {
        if case .offer(_, let offer, _, _) = self { return offer }
        return nil
    }
}
