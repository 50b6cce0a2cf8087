import Foundation
import ReclaimDomain

/// The keys of a cancel-flow campaign (trigger `CANCEL_FLOW`, ``CancelFlowCampaign``): each arm (the campaign itself
/// when it has no `variants`) answers with exactly one of `offer` (a promotional offer Reclaim signs), `message` (a
/// key the app words itself) or `switchTo` (a product to move to); `reasons` names the survey answers it takes.
enum CancelFlowKeys: CampaignKindKeys {
    static var domainType: any CampaignKind.Type { CancelFlowCampaign.self }
    static let armsAnswer = true

    /// The subscriber is cancelling a running subscription.
    static func decidesWhileSubscribed(_ campaign: ReclaimConfig.Campaign) -> Bool { true }

    static let trigger: String? = CancelFlowCampaign.trigger

    static func domain(_ campaign: ReclaimConfig.Campaign, basics: CampaignBasics) throws -> any CampaignKind {
        var basics = basics
        basics.variants = campaign.cancelSheetArms.map { id, weight, keys in
            let answer: CancelSheetAnswer
            if let offer = keys.offer {
                // The flow hands out both StoreKit 1 fields and the StoreKit 2 JWS (``OfferIssuer``): no format to choose.
                answer = .offer(productId: offer.productId, offerIdentifier: offer.offerIdentifier ?? "", messageIdentifier: "", signature: .v2)
            } else if let switchTo = keys.switchTo {
                answer = .switchTo(
                    productId: switchTo.productId,
                    messageIdentifier: "",
                    billingPlanType: switchTo.billingPlanType.flatMap(CancelSheetAnswer.BillingPlanType.init(rawValue:))
                )
            } else {
                answer = .message(messageIdentifier: keys.message ?? "")
            }
            return CampaignVariant(
                id: id,
                productId: answer.productId ?? "",
                offerIdentifier: answer.offerIdentifier ?? "",
                offerIdentifiersByPlan: keys.offer?.offerIdentifiers ?? [:],
                weight: weight,
                answer: answer
            )
        }
        return CancelFlowCampaign(
            basics,
            reasons: campaign.reasons.map(Set.init),
            saveWindow: TimeInterval(campaign.saveWindow.seconds),
            deliverableFor: TimeInterval(campaign.deliverableFor.seconds)
        )
    }

    static func problems(_ campaign: ReclaimConfig.Campaign) -> [(key: String, reason: String)] {
        var problems: [(key: String, reason: String)] = []
        for (key, given) in [
            ("messageIdentifier", campaign.messageIdentifier != nil || campaign.variants?.contains { $0.messageIdentifier != nil } == true),
            ("offerSignature", campaign.offerSignature != nil), ("shadow", campaign.shadow),
        ] where given {
            problems.append(
                (key, "applies to a cancel-sheet campaign (trigger: RETENTION_MESSAGING) only: the cancel flow's app words its own messages")
            )
        }
        if campaign.delay.seconds != 0 { problems.append(("delay", "a cancel-flow campaign answers at once: leave delay out")) }
        if campaign.variants != nil {
            for (key, given) in [("offer", campaign.offer != nil), ("message", campaign.message != nil), ("switchTo", campaign.switchTo != nil)]
            where given {
                problems.append((key, "give it per variant: each variant names its answer"))
            }
        }
        if let reasons = campaign.reasons, reasons.isEmpty {
            problems.append(("reasons", "is empty: no subscriber would get an answer (leave it out for every one)"))
        }
        var variantIds = Set<String>()
        for (id, weight, keys) in campaign.cancelSheetArms {
            let path = keys.path
            if campaign.variants != nil {
                if id.isEmpty { problems.append(("\(path)id", "must not be empty")) }
                if !variantIds.insert(id).inserted { problems.append(("\(path)id", "\(id) is listed twice")) }
                if !(1...1_000_000).contains(weight) { problems.append(("\(path)weight", "must be from 1 to 1000000, got \(weight)")) }
            }
            let given = [keys.offer != nil, keys.message != nil, keys.switchTo != nil].filter { $0 }.count
            if given != 1 {
                problems.append(
                    (
                        path.isEmpty ? "offer" : "\(path)offer",
                        "a cancel-flow answer is exactly one of offer: {productId, offerIdentifier or offerIdentifiers}, message: KEY "
                            + "or switchTo: {productId} (\(given) given)"
                    )
                )
                continue
            }
            if let message = keys.message, message.isEmpty || message.count > 200 {
                problems.append(("\(path)message", "must be 1 to 200 characters: the key the app words its message by"))
            }
            if let switchTo = keys.switchTo {
                if switchTo.productId.isEmpty { problems.append(("\(path)switchTo.productId", "must not be empty")) }
                if let plan = switchTo.billingPlanType, CancelSheetAnswer.BillingPlanType(rawValue: plan) == nil {
                    problems.append(("\(path)switchTo.billingPlanType", "'\(plan)' is not BILLED_UPFRONT or MONTHLY"))
                }
            }
            if let offer = keys.offer {
                if offer.offerCodes != nil {
                    problems.append(
                        (
                            "\(path)offer.offerCodes",
                            "the cancel flow answers with a promotional offer it signs: hand out codes from a notification campaign"
                        )
                    )
                } else {
                    problems += offer.problems(at: "\(path)offer.")
                }
            }
        }
        return problems
    }

    static func appProblems(_ campaign: ReclaimConfig.Campaign, app: ReclaimConfig.App) -> [(key: String, reason: String)] {
        // An offer answer carries both StoreKit 1 fields and the StoreKit 2 JWS: the key and the issuerId.
        let signs = campaign.cancelSheetArms.contains { $0.keys.offer != nil }
        let known = Set(app.cancelReasons + [CancelFlowCampaign.noAnswer])
        return signingProblems(campaign, app: app, signs: signs, storeKit2: true)
            + (campaign.reasons ?? []).filter { !known.contains($0) }.map {
                ("reasons", "\($0) is not one of app \(campaign.app)'s cancelReasons (\(app.cancelReasons.joined(separator: ", "))) nor none")
            }
    }
}
