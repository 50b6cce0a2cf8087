import Foundation
import ReclaimDomain

/// What the kinds whose arms answer (the cancel sheet's and the cancel flow's: ``CampaignKindKeys/armsAnswer``) share:
/// each arm (the campaign itself when it has no `variants`) gives exactly one of `message`, `switchTo` or `offer`.
extension ReclaimConfig.Campaign {
    /// The arms as the rules see them. Call on a validated config. An arm without `messageIdentifier` (the cancel
    /// flow's: its app words its own messages) answers with an empty one; `offerSignature` chooses the cancel sheet's
    /// offer format (the cancel flow hands out both).
    func answeringVariants() -> [CampaignVariant] {
        let format = CancelSheetAnswer.OfferSignatureFormat(rawValue: offerSignature ?? "v2") ?? .v2
        return cancelSheetArms.map { id, weight, keys in
            let answer: CancelSheetAnswer
            if let offer = keys.offer {
                answer = .offer(
                    productId: offer.productId,
                    offerIdentifier: offer.offerIdentifier ?? "",
                    messageIdentifier: keys.messageIdentifier ?? "",
                    signature: format
                )
            } else if let switchTo = keys.switchTo {
                answer = .switchTo(
                    productId: switchTo.productId,
                    messageIdentifier: keys.messageIdentifier ?? "",
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
    }

    /// The problems of the arms every answering kind checks alike: answers given at the top beside `variants`, no
    /// `delay`, each variant's id and weight, exactly one answer per arm (`answers` says which), a switch's product and
    /// plan, an offer's keys. `arm` adds the kind's own problems of one arm (path, variant id, keys), before the switch's
    /// and the offer's, and says whether those are checked too.
    func answerArmProblems(
        kind: String,
        answers: String,
        arm: (_ path: String, _ id: String, _ keys: ArmKeys) -> (problems: [(key: String, reason: String)], checkRest: Bool)
    ) -> [(key: String, reason: String)] {
        var problems: [(key: String, reason: String)] = []
        if variants != nil {
            for (key, given) in [("offer", offer != nil), ("message", message != nil), ("switchTo", switchTo != nil)] where given {
                problems.append((key, "give it per variant: each variant names its answer"))
            }
        }
        if delay.seconds != 0 { problems.append(("delay", "a \(kind) campaign answers at once: leave delay out")) }
        var variantIds = Set<String>()
        for (id, weight, keys) in cancelSheetArms {
            let path = keys.path
            if variants != nil {
                if id.isEmpty { problems.append(("\(path)id", "must not be empty")) }
                if !variantIds.insert(id).inserted { problems.append(("\(path)id", "\(id) is listed twice")) }
                if !(1...1_000_000).contains(weight) { problems.append(("\(path)weight", "must be from 1 to 1000000, got \(weight)")) }
            }
            let given = [keys.offer != nil, keys.message != nil, keys.switchTo != nil].filter { $0 }.count
            if given != 1 {
                problems.append((path.isEmpty ? "offer" : "\(path)offer", "a \(kind) answer is exactly one of \(answers) (\(given) given)"))
                continue
            }
            let own = arm(path, id, keys)
            problems += own.problems
            guard own.checkRest else { continue }
            if let switchTo = keys.switchTo {
                if switchTo.productId.isEmpty { problems.append(("\(path)switchTo.productId", "must not be empty")) }
                if let plan = switchTo.billingPlanType, CancelSheetAnswer.BillingPlanType(rawValue: plan) == nil {
                    problems.append(("\(path)switchTo.billingPlanType", "'\(plan)' is not BILLED_UPFRONT or MONTHLY"))
                }
            }
            if let offer = keys.offer { problems += offer.problems(at: "\(path)offer.") }
        }
        return problems
    }
}
