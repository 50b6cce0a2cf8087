import Foundation
import ReclaimDomain
import ReclaimTestSupport
import Testing

/// Who qualifies beyond the trigger: products, tenure, expiration intent, storefront, how recently the subscription
/// lapsed. Every condition set must hold; an unset one lets anyone through.
@Suite(.poolWatchdog) struct CampaignConditionsTests: CampaignFactories {
    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var conditions: CampaignConditions
        var productId: String? = Fixture.monthly
        /// Days before the event (t0) of the first purchase; nil when never seen.
        var tenureDays: Double? = 365
        var expirationIntent: Int? = 1
        var storefront: String? = "USA"
        /// Days before the event (t0) the subscription expired (negative: it expires after); nil when unknown.
        var expiredDaysBefore: Double? = 1
        /// Seconds after the event that the worker evaluates it.
        var evaluatedAfter: Double = 3600
        var expected: Expected
        var description: String { name }
    }

    @Test(arguments: [
        Case(name: "no conditions", conditions: CampaignConditions(), expected: .offered()),
        Case(
            name: "no conditions, nothing known",
            conditions: CampaignConditions(),
            tenureDays: nil,
            expirationIntent: nil,
            storefront: nil,
            expected: .offered()
        ),

        Case(name: "product listed", conditions: CampaignConditions(products: [Fixture.monthly]), expected: .offered()),
        Case(name: "product among several", conditions: CampaignConditions(products: [Fixture.yearly, Fixture.monthly]), expected: .offered()),
        Case(name: "product not listed", conditions: CampaignConditions(products: [Fixture.yearly]), expected: .skipped("product")),
        Case(name: "product unknown", conditions: CampaignConditions(products: [Fixture.monthly]), productId: nil, expected: .skipped("product")),

        Case(name: "tenure well above", conditions: CampaignConditions(minimumTenure: 180 * 86_400), tenureDays: 365, expected: .offered()),
        Case(
            name: "tenure exactly the minimum",
            conditions: CampaignConditions(minimumTenure: 180 * 86_400),
            tenureDays: 180,
            expected: .offered()
        ),
        Case(name: "tenure below", conditions: CampaignConditions(minimumTenure: 180 * 86_400), tenureDays: 100, expected: .skipped("tenure")),
        Case(
            name: "tenure unknown",
            conditions: CampaignConditions(minimumTenure: 180 * 86_400),
            tenureDays: nil,
            expected: .skipped("tenure")
        ),
        // Tenure is measured at the event: reaching the minimum between the event and now does not count.
        Case(
            name: "tenure reached only after the event",
            conditions: CampaignConditions(minimumTenure: 180 * 86_400),
            tenureDays: 179,
            evaluatedAfter: 2 * 86_400,
            expected: .skipped("tenure")
        ),

        Case(name: "intent listed", conditions: CampaignConditions(expirationIntents: [1]), expirationIntent: 1, expected: .offered()),
        Case(name: "intent among several", conditions: CampaignConditions(expirationIntents: [1, 2]), expirationIntent: 2, expected: .offered()),
        Case(
            name: "intent not listed",
            conditions: CampaignConditions(expirationIntents: [2]),
            expirationIntent: 1,
            expected: .skipped("expirationIntent")
        ),
        Case(
            name: "intent absent",
            conditions: CampaignConditions(expirationIntents: [1]),
            expirationIntent: nil,
            expected: .skipped("expirationIntent")
        ),

        Case(name: "storefront listed", conditions: CampaignConditions(storefronts: ["USA", "CAN"]), storefront: "CAN", expected: .offered()),
        Case(
            name: "storefront not listed",
            conditions: CampaignConditions(storefronts: ["FRA"]),
            storefront: "USA",
            expected: .skipped("storefront")
        ),
        Case(name: "storefront unknown", conditions: CampaignConditions(storefronts: ["USA"]), storefront: nil, expected: .skipped("storefront")),

        // lapsedWithin: measured at the decision, from the stored expiry.
        Case(name: "lapsed recently", conditions: CampaignConditions(lapsedWithin: 30 * 86_400), expiredDaysBefore: 5, expected: .offered()),
        Case(
            name: "lapsed long ago",
            conditions: CampaignConditions(lapsedWithin: 30 * 86_400),
            expiredDaysBefore: 700,
            expected: .skipped("lapsedWithin: expired 700d ago")
        ),
        Case(
            name: "not expired",
            conditions: CampaignConditions(lapsedWithin: 30 * 86_400),
            expiredDaysBefore: -10,
            expected: .skipped("lapsedWithin: not expired")
        ),
        Case(
            name: "expiry unknown",
            conditions: CampaignConditions(lapsedWithin: 30 * 86_400),
            expiredDaysBefore: nil,
            expected: .skipped("lapsedWithin: expiry unknown")
        ),
        Case(
            name: "within at the trigger, past it at the decision",
            conditions: CampaignConditions(lapsedWithin: 30 * 86_400),
            expiredDaysBefore: 29,
            evaluatedAfter: 2 * 86_400,
            expected: .skipped("lapsedWithin: expired 31d ago")
        ),

        Case(
            name: "every condition met",
            conditions: CampaignConditions(
                products: [Fixture.monthly],
                minimumTenure: 180 * 86_400,
                expirationIntents: [1],
                storefronts: ["USA"]
            ),
            expected: .offered()
        ),
        Case(
            name: "all met but the storefront",
            conditions: CampaignConditions(
                products: [Fixture.monthly],
                minimumTenure: 180 * 86_400,
                expirationIntents: [1],
                storefronts: ["DEU"]
            ),
            expected: .skipped("storefront")
        ),
    ])
    func conditions(_ row: Case) throws {
        var subscriber = state(
            productId: row.productId,
            storefront: row.storefront,
            firstPurchaseAt: row.tenureDays.map { Fixture.days(-$0) },
            expirationIntent: row.expirationIntent
        )
        subscriber.expiresAt = row.expiredDaysBefore.map { Fixture.days(-$0) }
        let decision = try decide(
            campaign(conditions: row.conditions),
            state: subscriber,
            event: event(at: Fixture.t0),
            now: Fixture.seconds(row.evaluatedAfter)
        )
        row.expected.check(decision, "\(row.name)")
        if row.expected.outcome == .skipped {
            #expect(decision.reason.hasPrefix("condition not met"), "\(row.name): \(decision.reason)")
        }
    }

    @Test(
        "stored as JSON under the keys reclaim.campaigns.conditions always had: durations in seconds, as minimumTenureSeconds and lapsedWithinSeconds"
    )
    func storedJSON() throws {
        let conditions = CampaignConditions(products: ["p"], minimumTenure: 86_400, expirationIntents: [1], storefronts: ["USA"], lapsedWithin: 7200)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(conditions), as: UTF8.self)
        #expect(json == #"{"expirationIntents":[1],"lapsedWithinSeconds":7200,"minimumTenureSeconds":86400,"products":["p"],"storefronts":["USA"]}"#)
        // What earlier binaries wrote reads back the same.
        #expect(try JSONDecoder().decode(CampaignConditions.self, from: Data(json.utf8)) == conditions)
    }
}
