import Foundation

/// How a notification moves a subscriber's offers on: redemption and withdrawal. Pure, like the campaign rules.
public enum OfferLifecycle {
    /// A promotional-offer purchase Apple reported.
    public struct Redemption: Sendable, Equatable {
        /// The live Reclaim offer it redeems; nil when Reclaim did not issue this offer to the subscriber.
        public var offerId: UUID?
        public var offerIdentifier: String
        public var productId: String?
        public var transactionId: String?
        /// Milli-units of `currency`.
        public var price: Int64?
        public var currency: String?
        public var redeemedAt: Date
    }

    /// A live offer the subscriber no longer needs, with the reason in words.
    public struct Withdrawal: Sendable, Equatable {
        public var offerId: UUID
        public var reason: String
    }

    public struct Outcome: Sendable, Equatable {
        public var redemption: Redemption?
        public var withdrawal: Withdrawal?
    }

    /// Apple's `offerType` for promotional offers (1 introductory, 2 promotional, 3 offer code, 4 win-back).
    public static let promotionalOfferType: Int64 = 2

    /// - Redemption: OFFER_REDEEMED, SUBSCRIBED or DID_RENEW whose transaction carries offerType 2 and an
    ///   offerIdentifier; it redeems the live offer with that identifier, or is recorded as not issued by Reclaim.
    /// - Withdrawal: the subscriber came back without the offer (auto-renew turned on again, a resubscription, a
    ///   billing recovery) after the offer was triggered: the live campaign offer is no longer needed.
    public static func apply(event: SubscriptionEvent, liveOffer: OfferHistory.LiveOffer?) -> Outcome {
        var outcome = Outcome()
        if ["OFFER_REDEEMED", "SUBSCRIBED", "DID_RENEW"].contains(event.type),
            let transaction = event.transaction,
            transaction.offerType == promotionalOfferType,
            let offerIdentifier = transaction.offerIdentifier
        {
            let redeemed = liveOffer.flatMap { $0.offerIdentifier == offerIdentifier ? $0.id : nil }
            outcome.redemption = Redemption(
                offerId: redeemed,
                offerIdentifier: offerIdentifier,
                productId: transaction.productId,
                transactionId: transaction.transactionId,
                price: transaction.price,
                currency: transaction.currency,
                redeemedAt: transaction.purchaseDate.map(Date.init(unixMilliseconds:)) ?? event.signedDate
            )
            if redeemed != nil { return outcome }
        }
        if let liveOffer, !liveOffer.isGrant, event.signedDate > liveOffer.triggeredAt, let how = cameBack(event) {
            outcome.withdrawal = Withdrawal(offerId: liveOffer.id, reason: "the subscriber \(how) without the offer")
        }
        return outcome
    }

    /// How the subscriber came back, or nil when the event is not a return.
    private static func cameBack(_ event: SubscriptionEvent) -> String? {
        switch (event.type, event.subtype) {
        case ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED"): "turned auto-renew back on"
        case ("SUBSCRIBED", _): "subscribed again (\(event.subtype ?? "SUBSCRIBED"))"
        case ("DID_RENEW", "BILLING_RECOVERY"): "recovered from billing retry"
        default: nil
        }
    }
}
