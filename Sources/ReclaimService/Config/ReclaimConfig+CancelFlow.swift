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
        // Its keys refuse messageIdentifier and offerSignature: each arm answers with no Apple message, offers in v2.
        basics.variants = campaign.answeringVariants()
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
        if let reasons = campaign.reasons, reasons.isEmpty {
            problems.append(("reasons", "is empty: no subscriber would get an answer (leave it out for every one)"))
        }
        problems += campaign.answerArmProblems(
            kind: "cancel-flow",
            answers: "offer: {productId, offerIdentifier or offerIdentifiers}, message: KEY or switchTo: {productId}"
        ) { path, _, keys in
            if let message = keys.message, message.isEmpty || message.count > 200 {
                return ([("\(path)message", "must be 1 to 200 characters: the key the app words its message by")], true)
            }
            if keys.offer?.offerCodes != nil {
                return (
                    [
                        (
                            "\(path)offer.offerCodes",
                            "the cancel flow answers with a promotional offer it signs: hand out codes from a notification campaign"
                        )
                    ],
                    false
                )
            }
            return ([], true)
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
