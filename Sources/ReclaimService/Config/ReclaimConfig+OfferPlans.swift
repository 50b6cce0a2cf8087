import Foundation
import ReclaimDomain

/// An offer per billing plan. Apple (App Store Server API 1.21, monthly subscriptions with a 12-month commitment):
/// "Subscription offers—including introductory offers, promotional offers, win-back offers, and offer codes—are
/// specific to each billing plan." A campaign serving both plans names each plan's offer (`offerIdentifiers`), and the
/// config is refused where a campaign would hand one plan's offer to a subscription of the other.
extension ReclaimConfig.Campaign.Offer {
    /// Apple's `billingPlanType` values.
    static let billingPlans = CancelSheetAnswer.BillingPlanType.allCases.map(\.rawValue).sorted()

    /// The arm as the rules see it.
    func variant(id: String, weight: Int) -> CampaignVariant {
        CampaignVariant(
            id: id,
            productId: productId,
            offerIdentifier: offerIdentifier ?? "",
            offerIdentifiersByPlan: offerIdentifiers ?? [:],
            weight: weight,
            offerCodes: offerCodes
        )
    }

    /// This offer's own problems, keys under `path` (e.g. `offer.`, `variants[1].offer.`).
    func problems(at path: String) -> [(key: String, reason: String)] {
        var problems: [(key: String, reason: String)] = []
        if let offerCodes {
            if offerCodes.isEmpty { problems.append(("\(path)offerCodes", "must not be empty: the offer-code offer's reference name")) }
            if offerIdentifier != nil || offerIdentifiers != nil {
                problems.append(
                    ("\(path)offerCodes", "give offerCodes or offerIdentifier(s), not both: a code is redeemed in the App Store, not signed")
                )
            }
            return problems
        }
        if productId.isEmpty { problems.append(("\(path)productId", "must not be empty")) }
        if offerIdentifier?.isEmpty == true { problems.append(("\(path)offerIdentifier", "must not be empty")) }
        guard let byPlan = offerIdentifiers else {
            if offerIdentifier == nil {
                problems.append(("\(path)offerIdentifier", "missing: give offerIdentifier, or offerIdentifiers per billing plan"))
            }
            return problems
        }
        if byPlan.isEmpty { problems.append(("\(path)offerIdentifiers", "is empty: name the offer of MONTHLY, BILLED_UPFRONT or both")) }
        for (plan, offer) in byPlan.sorted(by: { $0.key < $1.key }) {
            if !Self.billingPlans.contains(plan) {
                problems.append(("\(path)offerIdentifiers", "\(plan) is not one of Apple's billing plans (MONTHLY, BILLED_UPFRONT)"))
            } else if offer.isEmpty {
                problems.append(("\(path)offerIdentifiers.\(plan)", "must not be empty"))
            }
        }
        let offers = byPlan.filter { Self.billingPlans.contains($0.key) && !$0.value.isEmpty }
        if Set(offers.values).count < offers.count, let twice = offers.values.first(where: { id in offers.values.filter { $0 == id }.count > 1 }) {
            problems.append(
                (
                    "\(path)offerIdentifiers",
                    "names \(twice) for both MONTHLY and BILLED_UPFRONT: Apple's offers are specific to each billing plan, so one plan would get the other's offer"
                )
            )
        }
        if let any = offerIdentifier, let plan = offers.first(where: { $0.value == any })?.key {
            problems.append(
                (
                    "\(path)offerIdentifier",
                    "\(any) is the \(plan) offer (offerIdentifiers.\(plan)), so a subscription of another plan would get it: give that plan's offer or leave offerIdentifier out"
                )
            )
        }
        return problems
    }
}

extension ReclaimConfig.Campaign {
    /// Every offer the campaign may make, with its key path: its `offer`, each variant's, or a cancel-sheet arm's.
    var offers: [(path: String, offer: Offer)] {
        if kind.armsAnswer { return cancelSheetArms.compactMap { arm in arm.keys.offer.map { ("\(arm.keys.path)offer.", $0) } } }
        return (offer.map { [("offer.", $0)] } ?? [])
            + (variants ?? []).enumerated().compactMap { index, variant in variant.offer.map { ("variants[\(index)].offer.", $0) } }
    }

    /// Whether every offer of the campaign is an offer code: it signs nothing.
    var handsOutCodesOnly: Bool { !offers.isEmpty && offers.allSatisfy { $0.offer.offerCodes != nil } }

    /// The billing plans a subscription this campaign may reach can have (its `conditions.billingPlans`, else both).
    var reachedPlans: [String] { conditions.billingPlans ?? Offer.billingPlans }
}

extension ReclaimConfig {
    /// Where a campaign would hand one plan's offer to the other plan's subscribers, as known from the config itself:
    /// an offer is a plan's when a campaign names it in `offerIdentifiers` under that plan, or gives it as its one
    /// offer with `conditions.billingPlans` of that plan alone. And a campaign whose plans reach no offer of theirs.
    func offerPlanProblems() -> [String] {
        var planOf: [String: (plan: String, source: String)] = [:]
        func key(_ product: String, _ offer: String) -> String { "\(product)\u{0}\(offer)" }
        for campaign in campaigns {
            for (_, offer) in campaign.offers {
                for (plan, id) in offer.offerIdentifiers ?? [:] where Campaign.Offer.billingPlans.contains(plan) {
                    planOf[key(offer.productId, id)] = planOf[key(offer.productId, id)] ?? (plan, "\(campaign.id)'s offerIdentifiers.\(plan)")
                }
                if let id = offer.offerIdentifier, offer.offerIdentifiers == nil, let plans = campaign.conditions.billingPlans, plans.count == 1 {
                    planOf[key(offer.productId, id)] =
                        planOf[key(offer.productId, id)] ?? (plans[0], "campaign \(campaign.id), conditions.billingPlans [\(plans[0])]")
                }
            }
        }
        var problems: [String] = []
        for campaign in campaigns {
            for (path, offer) in campaign.offers {
                let byPlan = offer.offerIdentifiers ?? [:]
                // The plans this arm serves with its one offer for any plan.
                let servedByAny = campaign.reachedPlans.filter { byPlan[$0] == nil }
                if let id = offer.offerIdentifier, let known = planOf[key(offer.productId, id)],
                    let other = servedByAny.first(where: { $0 != known.plan })
                {
                    let fix = "name each plan's offer in offerIdentifiers, or set conditions.billingPlans: [\(known.plan)]"
                    problems.append(
                        "campaign \(campaign.id): \(path)offerIdentifier: \(id) is the \(known.plan) offer (\(known.source)), "
                            + "but this campaign would give it to \(other) subscriptions: \(fix)"
                    )
                }
                if offer.offerIdentifier == nil, !byPlan.isEmpty, let missing = campaign.reachedPlans.first(where: { byPlan[$0] == nil }),
                    campaign.conditions.billingPlans != nil
                {
                    problems.append(
                        "campaign \(campaign.id): \(path)offerIdentifiers: names no \(missing) offer, but conditions.billingPlans admits \(missing): those subscriptions would get nothing"
                    )
                }
            }
        }
        return problems
    }
}
