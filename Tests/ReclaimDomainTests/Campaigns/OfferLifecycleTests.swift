import Foundation
import ReclaimDomain
import ReclaimTestSupport
import Testing

/// How notifications redeem and withdraw a subscriber's live offer.
@Suite(.poolWatchdog) struct OfferLifecycleTests: CampaignFactories {
    enum Redeems: Sendable, CustomStringConvertible {
        /// No redemption.
        case nothing
        /// A redemption of the live offer (offerId is its id).
        case liveOffer
        /// A redemption of an offer Reclaim did not issue (offerId nil).
        case notIssued

        var description: String {
            switch self {
            case .nothing: "no redemption"
            case .liveOffer: "redeems the live offer"
            case .notIssued: "redemption not issued by Reclaim"
            }
        }
    }

    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var type: String
        var subtype: String?
        /// Seconds after the live offer's trigger (t0) that the event is signed.
        var after: Double = 86_400
        /// The transaction's offerType and offerIdentifier; no transaction when offerType is nil.
        var offerType: Int64? = nil
        var offerIdentifier: String? = nil
        var hasLiveOffer = true
        var isGrant = false
        var redeems: Redeems
        /// A word the withdrawal's reason contains; nil for no withdrawal.
        var withdrawal: String?
        var description: String { name }
    }

    static let liveId = UUID(uuidString: "3F2504E0-4F89-11D3-9A0C-0305E82C3301")!

    @Test(arguments: [
        // Redemption of the live offer: promotional offerType 2 and its offerIdentifier.
        Case(name: "OFFER_REDEEMED of the live offer", type: "OFFER_REDEEMED", offerType: 2, offerIdentifier: "winback50", redeems: .liveOffer),
        Case(
            name: "SUBSCRIBED/RESUBSCRIBE with the live offer",
            type: "SUBSCRIBED",
            subtype: "RESUBSCRIBE",
            offerType: 2,
            offerIdentifier: "winback50",
            redeems: .liveOffer
        ),
        Case(name: "DID_RENEW with the live offer", type: "DID_RENEW", offerType: 2, offerIdentifier: "winback50", redeems: .liveOffer),
        Case(
            name: "DID_RENEW/BILLING_RECOVERY with the live offer",
            type: "DID_RENEW",
            subtype: "BILLING_RECOVERY",
            offerType: 2,
            offerIdentifier: "winback50",
            redeems: .liveOffer
        ),
        Case(name: "a grant is redeemed too", type: "OFFER_REDEEMED", offerType: 2, offerIdentifier: "winback50", isGrant: true, redeems: .liveOffer),

        // Another promotional offer: recorded as not Reclaim's; the live one is withdrawn only on a return.
        Case(name: "OFFER_REDEEMED of another offer", type: "OFFER_REDEEMED", offerType: 2, offerIdentifier: "spring20", redeems: .notIssued),
        Case(
            name: "SUBSCRIBED/RESUBSCRIBE with another offer",
            type: "SUBSCRIBED",
            subtype: "RESUBSCRIBE",
            offerType: 2,
            offerIdentifier: "spring20",
            redeems: .notIssued,
            withdrawal: "subscribed again"
        ),
        Case(name: "DID_RENEW with another offer", type: "DID_RENEW", offerType: 2, offerIdentifier: "spring20", redeems: .notIssued),
        Case(
            name: "DID_RENEW/BILLING_RECOVERY with another offer",
            type: "DID_RENEW",
            subtype: "BILLING_RECOVERY",
            offerType: 2,
            offerIdentifier: "spring20",
            redeems: .notIssued,
            withdrawal: "billing retry"
        ),
        Case(
            name: "SUBSCRIBED with another offer keeps a grant",
            type: "SUBSCRIBED",
            subtype: "RESUBSCRIBE",
            offerType: 2,
            offerIdentifier: "spring20",
            isGrant: true,
            redeems: .notIssued
        ),
        Case(
            name: "a promotional offer with no live offer",
            type: "OFFER_REDEEMED",
            offerType: 2,
            offerIdentifier: "winback50",
            hasLiveOffer: false,
            redeems: .notIssued
        ),

        // Other doors: recorded as discounts Reclaim did not issue, even when the identifier is one of Reclaim's.
        Case(name: "OFFER_REDEEMED of an offer code", type: "OFFER_REDEEMED", offerType: 3, offerIdentifier: "winback50", redeems: .notIssued),
        Case(
            name: "OFFER_REDEEMED of Apple's win-back offer",
            type: "OFFER_REDEEMED",
            offerType: 4,
            offerIdentifier: "APPLE-WB",
            redeems: .notIssued
        ),
        Case(
            name: "DID_RENEW with an App Store Connect retention offer",
            type: "DID_RENEW",
            offerType: 5,
            offerIdentifier: "ASC1",
            redeems: .notIssued
        ),
        Case(name: "OFFER_REDEEMED with a type Apple adds later", type: "OFFER_REDEEMED", offerType: 9, offerIdentifier: "NEW", redeems: .notIssued),
        // Not a discount Reclaim can count.
        Case(name: "OFFER_REDEEMED with no offerIdentifier", type: "OFFER_REDEEMED", offerType: 2, redeems: .nothing),
        Case(name: "DID_RENEW at full price", type: "DID_RENEW", redeems: .nothing),
        Case(
            name: "EXPIRED with the offer's identifier",
            type: "EXPIRED",
            subtype: "VOLUNTARY",
            offerType: 2,
            offerIdentifier: "winback50",
            redeems: .nothing
        ),
        Case(
            name: "SUBSCRIBED/RESUBSCRIBE with an introductory offer",
            type: "SUBSCRIBED",
            subtype: "RESUBSCRIBE",
            offerType: 1,
            offerIdentifier: "intro",
            redeems: .nothing,
            withdrawal: "subscribed again"
        ),

        // Coming back without the offer.
        Case(
            name: "auto-renew turned on after the trigger",
            type: "DID_CHANGE_RENEWAL_STATUS",
            subtype: "AUTO_RENEW_ENABLED",
            redeems: .nothing,
            withdrawal: "auto-renew"
        ),
        Case(
            name: "auto-renew turned on a second after",
            type: "DID_CHANGE_RENEWAL_STATUS",
            subtype: "AUTO_RENEW_ENABLED",
            after: 1,
            redeems: .nothing,
            withdrawal: "auto-renew"
        ),
        Case(
            name: "auto-renew turned on before the trigger",
            type: "DID_CHANGE_RENEWAL_STATUS",
            subtype: "AUTO_RENEW_ENABLED",
            after: -86_400,
            redeems: .nothing
        ),
        Case(
            name: "auto-renew turned on at the trigger's time",
            type: "DID_CHANGE_RENEWAL_STATUS",
            subtype: "AUTO_RENEW_ENABLED",
            after: 0,
            redeems: .nothing
        ),
        Case(name: "auto-renew turned off", type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", redeems: .nothing),
        Case(
            name: "a grant stays when auto-renew is turned on",
            type: "DID_CHANGE_RENEWAL_STATUS",
            subtype: "AUTO_RENEW_ENABLED",
            isGrant: true,
            redeems: .nothing
        ),
        Case(
            name: "no live offer, auto-renew on",
            type: "DID_CHANGE_RENEWAL_STATUS",
            subtype: "AUTO_RENEW_ENABLED",
            hasLiveOffer: false,
            redeems: .nothing
        ),
        Case(name: "resubscribed without an offer", type: "SUBSCRIBED", subtype: "RESUBSCRIBE", redeems: .nothing, withdrawal: "subscribed again"),
        Case(name: "resubscribed before the trigger", type: "SUBSCRIBED", subtype: "RESUBSCRIBE", after: -60, redeems: .nothing),
        Case(name: "a grant stays on resubscription", type: "SUBSCRIBED", subtype: "RESUBSCRIBE", isGrant: true, redeems: .nothing),
        Case(name: "billing recovered", type: "DID_RENEW", subtype: "BILLING_RECOVERY", redeems: .nothing, withdrawal: "billing retry"),
        Case(name: "a grant stays on billing recovery", type: "DID_RENEW", subtype: "BILLING_RECOVERY", isGrant: true, redeems: .nothing),
    ])
    func lifecycle(_ row: Case) {
        let live = liveOffer(id: Self.liveId, campaignId: "winback", offerIdentifier: "winback50", triggeredAt: Fixture.t0, isGrant: row.isGrant)
        let transaction = row.offerType.map {
            TransactionInfo(
                originalTransactionId: Fixture.originalTransactionId,
                transactionId: "2000000000000077",
                productId: Fixture.monthly,
                purchaseDate: 1_700_090_000_000,
                offerType: $0,
                offerIdentifier: row.offerIdentifier,
                currency: "EUR",
                price: 4_990
            )
        }
        let outcome = OfferLifecycle.apply(
            event: event(row.type, row.subtype, at: Fixture.seconds(row.after), transaction: transaction),
            liveOffer: row.hasLiveOffer ? live : nil
        )

        switch row.redeems {
        case .nothing:
            #expect(outcome.redemption == nil, "\(row.name)")
        case .liveOffer, .notIssued:
            let redemption = outcome.redemption
            #expect(redemption != nil, "\(row.name)")
            #expect(redemption?.offerId == (row.redeems == .liveOffer ? Self.liveId : nil), "\(row.name)")
            #expect(redemption?.offerIdentifier == row.offerIdentifier)
            #expect(redemption?.productId == Fixture.monthly)
            #expect(redemption?.transactionId == "2000000000000077")
            #expect(redemption?.price == 4_990)
            #expect(redemption?.currency == "EUR")
            #expect(redemption?.redeemedAt == Date(unixMilliseconds: 1_700_090_000_000))
        }

        if let word = row.withdrawal {
            #expect(outcome.withdrawal?.offerId == Self.liveId, "\(row.name)")
            #expect(outcome.withdrawal?.reason.contains(word) == true, "\(row.name): \(outcome.withdrawal?.reason ?? "no withdrawal")")
        } else {
            #expect(outcome.withdrawal == nil, "\(row.name): \(outcome.withdrawal?.reason ?? "")")
        }
        // A redeemed live offer is never also withdrawn.
        if row.redeems == .liveOffer { #expect(outcome.withdrawal == nil) }
    }

    @Test func redeemedAtFallsBackToTheNotificationsSignedDate() {
        let transaction = TransactionInfo(productId: Fixture.monthly, offerType: 2, offerIdentifier: "winback50")
        let outcome = OfferLifecycle.apply(
            event: event("OFFER_REDEEMED", nil, at: Fixture.days(2), transaction: transaction),
            liveOffer: liveOffer(id: Self.liveId)
        )
        #expect(outcome.redemption?.offerId == Self.liveId)
        #expect(outcome.redemption?.redeemedAt == Fixture.days(2))
        #expect(outcome.redemption?.price == nil)
        #expect(outcome.redemption?.currency == nil)
    }

    @Test func promotionalOfferTypeIsApplesTwo() {
        #expect(OfferLifecycle.promotionalOfferType == 2)
    }
}
