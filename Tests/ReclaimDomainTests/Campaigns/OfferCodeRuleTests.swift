import Foundation
import ReclaimDomain
import ReclaimTestSupport
import Testing

/// Offer codes in the rules: a campaign that hands out codes decides only while every arm's pool has one for the
/// subscriber and the subscriber had none of its offers; the App Store Connect download as Reclaim reads it; which
/// customers a trigger reaches.
@Suite(.poolWatchdog) struct OfferCodeRuleTests: CampaignFactories {
    /// A win-back campaign whose arms take codes of `offers` (one arm each).
    func codeCampaign(_ offers: [String], holdoutPercent: Int = 0) -> NotificationCampaign {
        var campaign = campaign(holdoutPercent: holdoutPercent)
        campaign.variants = offers.map { CampaignVariant(id: $0, productId: "", offerIdentifier: "", offerCodes: $0) }
        return campaign
    }

    @Test func aCodeIsOfferedWhileThePoolHasOneAndTheSubscriberHadNone() throws {
        let history = OfferHistory(codes: OfferCodes.Context(available: ["WINBACK-CODES"]))
        let decision = try decide(codeCampaign(["WINBACK-CODES"]), history: history)
        Expected.offered().check(decision)
        #expect(decision.variant?.offerCodes == "WINBACK-CODES")
    }

    @Test func anEmptyPoolSkipsWithItsReason() throws {
        let decision = try decide(codeCampaign(["WINBACK-CODES"]), history: OfferHistory(codes: OfferCodes.Context()))
        Expected.skipped("no code left").check(decision)
        #expect(decision.reason.contains("WINBACK-CODES"))
    }

    @Test func aSubscriberGivenACodeOfTheOfferGetsNoOther() throws {
        // Apple: "each customer can redeem one code per offer".
        let history = OfferHistory(codes: OfferCodes.Context(available: ["WINBACK-CODES"], given: ["WINBACK-CODES"]))
        Expected.skipped("already given").check(try decide(codeCampaign(["WINBACK-CODES"]), history: history))
    }

    @Test func everyArmsPoolIsCheckedBeforeTheHoldout() throws {
        // A dry arm skips held-out subscribers too: the control group stays like the treated.
        let history = OfferHistory(codes: OfferCodes.Context(available: ["A"]))
        let decision = try decide(codeCampaign(["A", "B"], holdoutPercent: 100), history: history)
        Expected.skipped("no code left").check(decision)
        #expect(decision.reason.contains(" B "))
        Expected.heldOut().check(
            try decide(codeCampaign(["A", "B"], holdoutPercent: 100), history: OfferHistory(codes: .init(available: ["A", "B"])))
        )
    }

    @Test func withoutPoolsToAskTheRuleDoesNotApply() throws {
        // `reclaim campaigns simulate` has no database: codes are taken as available.
        Expected.offered().check(try decide(codeCampaign(["WINBACK-CODES"]), history: OfferHistory()))
    }

    @Test func aSignedOfferCampaignIgnoresTheCodes() throws {
        Expected.offered().check(try decide(campaign(), history: OfferHistory(codes: OfferCodes.Context())))
    }

    @Test(
        arguments: [
            ("EXPIRED", "VOLUNTARY", OfferCodes.Eligibility.expired),
            ("EXPIRED", "BILLING_RETRY", .expired),
            ("GRACE_PERIOD_EXPIRED", nil, .expired),
            ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", .existing),
            ("DID_FAIL_TO_RENEW", "GRACE_PERIOD", .existing),
            ("DID_FAIL_TO_RENEW", nil, .existing),
        ] as [(String, String?, OfferCodes.Eligibility)]
    )
    func aTriggerReachesExistingOrExpiredSubscribers(type: String, subtype: String?, expected: OfferCodes.Eligibility) {
        #expect(OfferCodes.Eligibility.of(CampaignTrigger(type: type, subtype: subtype)) == expected)
    }

    @Test func simulateHoldsACodeAsTheWorkersDo() {
        // A code is not the app's live offer: a signed offer of lower priority is still made; a second lapse gets no
        // second code of the offer.
        var codes = codeCampaign(["WINBACK-CODES"])
        codes.priority = 10
        codes.cooldown = 0
        var simulator = CampaignSimulator(campaigns: [codes, campaign("retain", trigger: CampaignTrigger(type: "DID_CHANGE_RENEWAL_STATUS"))])
        func snapshot(_ type: String, _ subtype: String?, at days: Double) -> SubscriptionSnapshot {
            SubscriptionSnapshot(
                bundleId: Fixture.bundleId,
                environment: Fixture.environment,
                originalTransactionId: Fixture.originalTransactionId,
                notificationType: type,
                subtype: subtype,
                signedDate: Fixture.days(days),
                notificationUUID: UUID(),
                transaction: TransactionInfo(originalTransactionId: Fixture.originalTransactionId, transactionId: "1", productId: Fixture.monthly)
            )
        }
        for (type, subtype, days) in [
            ("EXPIRED", "VOLUNTARY", 0.0), ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", 1), ("EXPIRED", "VOLUNTARY", 2),
        ] {
            simulator.process(snapshot(type, subtype, at: days), now: Fixture.days(days))
        }
        let lines = simulator.stories.values.flatMap { $0.flatMap(\.lines) }
        #expect(lines.contains { $0.hasPrefix("winback: offered") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("retain: offered") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("winback: skipped: offer code already given") }, "\(lines)")
    }

    @Test func eligibilitiesParseAsAppStoreConnectNamesThem() {
        #expect(OfferCodes.Eligibility.parse("expired") == [.expired])
        #expect(OfferCodes.Eligibility.parse("Expired, existing") == [.existing, .expired])
        #expect(OfferCodes.Eligibility.parse("lapsed") == nil)
        #expect(OfferCodes.Eligibility.parse("new,new") == nil)
        #expect(OfferCodes.Eligibility.parse("") == nil)
    }

    @Test func aDownloadIsReadAsOneCodePerLineOrTheFirstCSVColumn() throws {
        #expect(try OfferCodes.parseFile("ABCD1234EFGH\r\nijkl5678mnop\n\n") == ["ABCD1234EFGH", "IJKL5678MNOP"])
        #expect(
            try OfferCodes.parseFile("\u{FEFF}Offer Code,Expiration\n\"AAAA1111\",2027-05-01\nBBBB2222,2027-05-01\n") == ["AAAA1111", "BBBB2222"]
        )
        #expect(try OfferCodes.parseFile("Code\nAAAA1111\nAAAA1111\n") == ["AAAA1111"])
        // A line that is not a code is refused by its number, never echoed (it may be a code with a typo).
        #expect(throws: InvalidInput("line 3 is not an offer code (1 to 64 letters and digits)")) {
            try OfferCodes.parseFile("AAAA1111\nBBBB2222\nCC-CC3333\n")
        }
    }

    @Test func theRedemptionURLTakesTheCode() {
        let template = OfferCodes.defaultRedemptionURL(appAppleId: 1_234_567_890)
        #expect(
            OfferCodes.redemptionURL(template: template, code: "AAAA1111")
                == "https://apps.apple.com/redeem?ctx=offercodes&id=1234567890&code=AAAA1111"
        )
    }
}
