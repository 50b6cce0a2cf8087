import Foundation

/// How a notification moves a subscriber's offers on: redemption and withdrawal. Pure, like the campaign rules.
public enum OfferLifecycle {
    /// A discounted purchase Apple reported, through any door.
    public struct Redemption: Sendable, Equatable {
        /// The live Reclaim offer it redeems; nil when Reclaim did not issue this offer to the subscriber.
        public var offerId: UUID?
        /// Apple's offerType: 2 promotional, 3 offer code, 4 win-back, 5 App Store Connect retention offer, or a
        /// type Apple adds later.
        public var offerType: Int64
        /// "" when Apple sent none.
        public var offerIdentifier: String
        /// Apple's offerPeriod (ISO 8601 duration), when given.
        public var offerPeriod: String?
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

    /// Apple's `offerType` for promotional offers (1 introductory, 2 promotional, 3 offer code, 4 win-back). Apple:
    /// "All offer types, except offer type 1, have an offerIdentifier." WWDC26 names 5 for App Store Connect's own
    /// retention offers; the offerType reference read for this release lists 1–4 only, so 5 and any later type are
    /// taken as what they are for certain: a discount Reclaim did not issue.
    public static let promotionalOfferType: Int64 = 2
    /// Introductory offers are for new subscribers: not a retention discount, not recorded.
    public static let introductoryOfferType: Int64 = 1

    /// - Redemption: OFFER_REDEEMED, SUBSCRIBED or DID_RENEW whose transaction carries an offerType other than 1; a
    ///   promotional one (2) redeems the live offer with its identifier; every other is recorded as a discount
    ///   Reclaim did not issue (offer codes, Apple's win-back offers, App Store Connect's retention offers).
    /// - Withdrawal: the subscriber came back without the offer (auto-renew turned on again, a resubscription, a
    ///   billing recovery) after the offer was triggered: the live campaign offer is no longer needed.
    public static func apply(event: SubscriptionEvent, liveOffer: OfferHistory.LiveOffer?) -> Outcome {
        var outcome = Outcome()
        if ["OFFER_REDEEMED", "SUBSCRIBED", "DID_RENEW"].contains(event.type),
            let transaction = event.transaction,
            let offerType = transaction.offerType,
            offerType != introductoryOfferType,
            // A promotional offer without its identifier matches nothing and is malformed (Apple: every type but 1 has one).
            offerType != promotionalOfferType || transaction.offerIdentifier != nil
        {
            let offerIdentifier = transaction.offerIdentifier ?? ""
            let redeemed =
                offerType == promotionalOfferType ? liveOffer.flatMap { $0.offerIdentifier == offerIdentifier ? $0.id : nil } : nil
            outcome.redemption = Redemption(
                offerId: redeemed,
                offerType: offerType,
                offerIdentifier: offerIdentifier,
                offerPeriod: transaction.offerPeriod,
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
