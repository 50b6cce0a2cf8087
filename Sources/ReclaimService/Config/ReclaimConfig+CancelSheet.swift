import Foundation
import ReclaimDomain

/// The keys of a cancel-sheet campaign (trigger `RETENTION_MESSAGING`): each arm (the campaign itself when it has no
/// `variants`) answers with exactly one of `message`, `switchTo` with `messageIdentifier`, or `offer` with
/// `messageIdentifier`.
/// The cancel sheet's kind (``CancelSheetCampaign``).
enum CancelSheetKeys: CampaignKindKeys {
    static var domainType: any CampaignKind.Type { CancelSheetCampaign.self }
    static let armsAnswer = true

    /// The subscriber opened the sheet of a running subscription.
    static func decidesWhileSubscribed(_ campaign: ReclaimConfig.Campaign) -> Bool { true }

    static let trigger: String? = CampaignTrigger.retentionMessaging.type

    static func domain(_ campaign: ReclaimConfig.Campaign, basics: CampaignBasics) throws -> any CampaignKind {
        var basics = basics
        basics.variants = campaign.answeringVariants()
        return CancelSheetCampaign(
            basics,
            shadow: campaign.shadow,
            saveWindow: TimeInterval(campaign.saveWindow.seconds),
            deliverableFor: TimeInterval(campaign.deliverableFor.seconds)
        )
    }

    static func problems(_ campaign: ReclaimConfig.Campaign) -> [(key: String, reason: String)] {
        // Apple's RealtimeResponseBody answers with a message, an alternate product or a promotional offer.
        campaign.cancelSheetProblems() + reasonsProblem(campaign)
            + campaign.offers.filter { $0.offer.offerCodes != nil }.map {
                (
                    "\($0.path)offerCodes",
                    "Apple's realtime answer to the cancel sheet has no offer code: hand out codes from a notification campaign"
                )
            }
    }

    static func appProblems(_ campaign: ReclaimConfig.Campaign, app: ReclaimConfig.App) -> [(key: String, reason: String)] {
        // It signs only when an arm answers with an offer (V1 needs no issuerId).
        signingProblems(campaign, app: app, signs: campaign.cancelSheetSignsOffers, storeKit2: campaign.offerSignature ?? "v2" == "v2")
            + (app.appAppleId == nil ? [("app", "app \(campaign.app) has no appAppleId: Apple's realtime requests name the app by it")] : [])
    }
}

extension ReclaimConfig.Campaign {
    var isCancelSheet: Bool { kind is CancelSheetKeys.Type }

    /// One arm's keys, wherever they are written.
    struct ArmKeys {
        var path: String
        var offer: Offer?
        var message: String?
        var switchTo: SwitchTo?
        var messageIdentifier: String?
    }

    /// The arms: each variant, or the campaign itself (path "").
    var cancelSheetArms: [(id: String, weight: Int, keys: ArmKeys)] {
        if let variants {
            return variants.enumerated().map { index, variant in
                (
                    variant.id, variant.weight,
                    ArmKeys(
                        path: "variants[\(index)].",
                        offer: variant.offer,
                        message: variant.message,
                        switchTo: variant.switchTo,
                        messageIdentifier: variant.messageIdentifier ?? messageIdentifier
                    )
                )
            }
        }
        return [("", 1, ArmKeys(path: "", offer: offer, message: message, switchTo: switchTo, messageIdentifier: messageIdentifier))]
    }

    /// Every problem of a cancel-sheet campaign's answers, as (key, reason).
    func cancelSheetProblems() -> [(key: String, reason: String)] {
        var problems: [(key: String, reason: String)] = []
        // Apple types messageIdentifier as a UUID ("string (uuid)"); anything else is never approved.
        func uuidProblem(_ key: String, _ value: String) -> (key: String, reason: String) {
            (key, "'\(value)' is not a UUID: Apple's message identifiers are UUIDs")
        }
        if let offerSignature, CancelSheetAnswer.OfferSignatureFormat(rawValue: offerSignature) == nil {
            problems.append(("offerSignature", "'\(offerSignature)' is not v2 or v1"))
        }
        problems += answerArmProblems(
            kind: "cancel-sheet",
            answers:
                "message: ID, switchTo: {productId} with messageIdentifier, or offer: {productId, offerIdentifier or offerIdentifiers} with messageIdentifier"
        ) { path, id, keys in
            var problems: [(key: String, reason: String)] = []
            if let message = keys.message {
                if UUID(uuidString: message) == nil { problems.append(uuidProblem("\(path)message", message)) }
                if variants?.first(where: { $0.id == id })?.messageIdentifier != nil {
                    problems.append(("\(path)messageIdentifier", "a message answer names its message in message: leave messageIdentifier out"))
                }
                return (problems, false)
            }
            guard let messageIdentifier = keys.messageIdentifier else {
                return ([("\(path)messageIdentifier", "missing: Apple shows a switch-plan or offer answer with an approved message")], false)
            }
            if UUID(uuidString: messageIdentifier) == nil { problems.append(uuidProblem("\(path)messageIdentifier", messageIdentifier)) }
            return (problems, true)
        }
        return problems
    }

    /// Whether any arm answers with a promotional offer (which needs the app's signing key).
    var cancelSheetSignsOffers: Bool { cancelSheetArms.contains { $0.keys.offer != nil } }
}
