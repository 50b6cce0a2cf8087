import Foundation
import ReclaimDomain
import ReclaimTestSupport
import Testing

/// Who qualifies beyond the trigger: products, tenure, expiration intent, storefront. Every condition set must
/// hold; an unset one lets anyone through.
@Suite(.poolWatchdog) struct CampaignConditionsTests: CampaignFactories {
    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var conditions: CampaignConditions
        var productId: String? = Fixture.monthly
        /// Days before the event (t0) of the first purchase; nil when never seen.
        var tenureDays: Double? = 365
        var expirationIntent: Int? = 1
        var storefront: String? = "USA"
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

        Case(name: "tenure well above", conditions: CampaignConditions(minimumTenureSeconds: 180 * 86_400), tenureDays: 365, expected: .offered()),
        Case(
            name: "tenure exactly the minimum",
            conditions: CampaignConditions(minimumTenureSeconds: 180 * 86_400),
            tenureDays: 180,
            expected: .offered()
        ),
        Case(name: "tenure below", conditions: CampaignConditions(minimumTenureSeconds: 180 * 86_400), tenureDays: 100, expected: .skipped("tenure")),
        Case(
            name: "tenure unknown",
            conditions: CampaignConditions(minimumTenureSeconds: 180 * 86_400),
            tenureDays: nil,
            expected: .skipped("tenure")
        ),
        // Tenure is measured at the event: reaching the minimum between the event and now does not count.
        Case(
            name: "tenure reached only after the event",
            conditions: CampaignConditions(minimumTenureSeconds: 180 * 86_400),
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

        Case(
            name: "every condition met",
            conditions: CampaignConditions(
                products: [Fixture.monthly],
                minimumTenureSeconds: 180 * 86_400,
                expirationIntents: [1],
                storefronts: ["USA"]
            ),
            expected: .offered()
        ),
        Case(
            name: "all met but the storefront",
            conditions: CampaignConditions(
                products: [Fixture.monthly],
                minimumTenureSeconds: 180 * 86_400,
                expirationIntents: [1],
                storefronts: ["DEU"]
            ),
            expected: .skipped("storefront")
        ),
    ])
    func conditions(_ row: Case) throws {
        let subscriber = state(
            productId: row.productId,
            storefront: row.storefront,
            firstPurchaseAt: row.tenureDays.map { Fixture.days(-$0) },
            expirationIntent: row.expirationIntent
        )
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
}
