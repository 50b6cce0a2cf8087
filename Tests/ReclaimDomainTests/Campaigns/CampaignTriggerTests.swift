import Foundation
import ReclaimDomain
import ReclaimTestSupport
import Testing

/// Which notifications trigger a campaign, and which trigger texts the config may hold.
@Suite(.poolWatchdog) struct CampaignTriggerTests: CampaignFactories {
    @Test(
        arguments: [
            // (trigger, event type, event subtype, matches?)
            ("EXPIRED", "EXPIRED", "VOLUNTARY", true),
            ("EXPIRED", "EXPIRED", "BILLING_RETRY", true),
            ("EXPIRED", "EXPIRED", nil, true),
            ("EXPIRED/VOLUNTARY", "EXPIRED", "VOLUNTARY", true),
            ("EXPIRED/VOLUNTARY", "EXPIRED", "BILLING_RETRY", false),
            ("EXPIRED/VOLUNTARY", "EXPIRED", nil, false),
            ("EXPIRED", "DID_FAIL_TO_RENEW", nil, false),
            ("EXPIRED/VOLUNTARY", "DID_CHANGE_RENEWAL_STATUS", "VOLUNTARY", false),
            ("DID_FAIL_TO_RENEW", "DID_FAIL_TO_RENEW", "GRACE_PERIOD", true),
            ("DID_FAIL_TO_RENEW", "DID_FAIL_TO_RENEW", nil, true),
            ("DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED", "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", true),
            ("DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED", "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED", false),
        ] as [(String, String, String?, Bool)]
    )
    func typeMatchesAnySubtypeAndTypeSlashSubtypeOnlyThatOne(trigger text: String, type: String, subtype: String?, matches: Bool) throws {
        let trigger = try CampaignTrigger(parsing: text)
        #expect(trigger.matches(type: type, subtype: subtype) == matches, "\(text) vs \(type)/\(subtype ?? "-")")
        // The evaluator decides for exactly the campaigns whose trigger matches.
        let decisions = evaluate([campaign(trigger: trigger)], event: event(type, subtype))
        #expect(decisions.count == (matches ? 1 : 0), "\(text) vs \(type)/\(subtype ?? "-")")
    }

    @Test(arguments: ["EXPIRED", "EXPIRED/VOLUNTARY"])
    func aCampaignOfAnotherBundleNeverFires(trigger text: String) throws {
        let trigger = try CampaignTrigger(parsing: text)
        let foreign = campaign("foreign", trigger: trigger, bundleId: Fixture.otherBundleId, priority: 10)
        #expect(evaluate([foreign], event: event("EXPIRED", "VOLUNTARY")).isEmpty)
        // Beside the app's own campaign with the same trigger, only the own one decides (and is not superseded).
        let decisions = evaluate([foreign, campaign("own", trigger: trigger)], event: event("EXPIRED", "VOLUNTARY"))
        #expect(decisions.map(\.campaign.id) == ["own"])
        #expect(decisions.first?.outcome == .offered)
    }

    @Test(
        arguments: [
            ("EXPIRED/VOLUNTARY", "EXPIRED", "VOLUNTARY"),
            ("DID_FAIL_TO_RENEW", "DID_FAIL_TO_RENEW", nil),
            ("DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED", "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED"),
            ("GRACE_PERIOD_EXPIRED", "GRACE_PERIOD_EXPIRED", nil),
        ] as [(String, String, String?)]
    )
    func acceptsDocumentedTypesAndSubtypes(text: String, type: String, subtype: String?) throws {
        let trigger = try CampaignTrigger(parsing: text)
        #expect(trigger.type == type)
        #expect(trigger.subtype == subtype)
        #expect(trigger == CampaignTrigger(type: type, subtype: subtype))
        #expect(trigger.description == text)
    }

    @Test(arguments: [
        // (text, what the error names)
        ("NOT_A_TYPE/FOO", "NOT_A_TYPE"),
        ("NOT_A_TYPE", "NOT_A_TYPE"),
        ("EXPIRED/NOPE", "NOPE"),
        ("", "TYPE/SUBTYPE"),
        ("A/B/C", "A/B/C"),
        ("EXPIRED/VOLUNTARY/EXTRA", "EXPIRED/VOLUNTARY/EXTRA"),
        ("EXPIRED/", "TYPE/SUBTYPE"),
        ("/VOLUNTARY", "TYPE/SUBTYPE"),
        ("expired", "expired"),
        ("VOLUNTARY", "VOLUNTARY"),
    ])
    func refusesWhatAppleDoesNotSend(text: String, named: String) {
        let error = #expect(throws: CampaignTriggerError.self, "'\(text)'") {
            try CampaignTrigger(parsing: text)
        }
        #expect(error?.description.contains(named) == true, "\(error?.description ?? "no error")")
    }
}
