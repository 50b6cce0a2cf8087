import Foundation
import ReclaimDomain

/// A kind of campaign as the config writes it: which `campaigns[]` entries are of the kind (by their `trigger`), and
/// the kind's type built from an entry. An entry's own keys are checked by ``ReclaimConfig/campaignProblems()``, which
/// asks the entry's kind for the problems of the keys only it has.
protocol CampaignKindKeys {
    /// The kind's type in ReclaimDomain.
    static var domainType: any CampaignKind.Type { get }
    /// The kind's own `trigger` value (`RETENTION_MESSAGING`, `CANCEL_FLOW`); nil for a kind of many (notifications).
    static var trigger: String? { get }
    /// Whether an entry with this `trigger` is of the kind (by default: it is the kind's own).
    static func claims(trigger: String) -> Bool
    /// The entry as the kind's type, around the `basics` every kind shares (variants still to fill).
    static func domain(_ campaign: ReclaimConfig.Campaign, basics: CampaignBasics) throws -> any CampaignKind
    /// The problems of the entry's keys this kind has or refuses, as (key, reason).
    static func problems(_ campaign: ReclaimConfig.Campaign) -> [(key: String, reason: String)]
    /// What the entry needs of its app (signing keys, issuerId, appAppleId) that `app` lacks, as (key, reason).
    static func appProblems(_ campaign: ReclaimConfig.Campaign, app: ReclaimConfig.App) -> [(key: String, reason: String)]
    /// Whether each arm answers (message, switch or offer: `cancelSheetArms`) rather than only making an offer.
    static var armsAnswer: Bool { get }
    /// Whether the entry decides while the subscription runs, so `conditions.lapsedWithin` could never be met.
    static func decidesWhileSubscribed(_ campaign: ReclaimConfig.Campaign) -> Bool
}

extension CampaignKindKeys {
    static func claims(trigger: String) -> Bool { trigger == self.trigger }

    /// `reasons` on a kind other than the cancel flow's.
    static func reasonsProblem(_ campaign: ReclaimConfig.Campaign) -> [(key: String, reason: String)] {
        campaign.reasons == nil ? [] : [("reasons", "applies to a cancel-flow campaign (trigger: CANCEL_FLOW) only")]
    }

    /// The signing an entry needs of its app: keys when it signs, an issuerId when it signs StoreKit 2 offers.
    static func signingProblems(
        _ campaign: ReclaimConfig.Campaign,
        app: ReclaimConfig.App,
        signs: Bool,
        storeKit2: Bool
    ) -> [(key: String, reason: String)] {
        var problems: [(key: String, reason: String)] = []
        if signs, app.signingKeys.isEmpty { problems.append(("app", "app \(campaign.app) has no signingKeys to sign offers with")) }
        if signs, storeKit2, (app.issuerId ?? "").isEmpty {
            problems.append(("app", "app \(campaign.app) has no issuerId, which StoreKit 2 offer signatures need"))
        }
        return problems
    }
}

extension ReclaimConfig.Campaign {
    /// Every kind. A trigger is claimed by one kind at most (`CampaignKindsTests`).
    static let kinds: [any CampaignKindKeys.Type] = [NotificationCampaignKeys.self, CancelSheetKeys.self, CancelFlowKeys.self]

    /// The entry's kind; a trigger no kind claims is taken as a notification's, whose check says what is wrong with it.
    var kind: any CampaignKindKeys.Type { Self.kinds.first { $0.claims(trigger: trigger) } ?? NotificationCampaignKeys.self }
}

/// The keys of a campaign fired by Apple's notifications (``NotificationCampaign``).
enum NotificationCampaignKeys: CampaignKindKeys {
    static var domainType: any CampaignKind.Type { NotificationCampaign.self }
    static let trigger: String? = nil
    static let armsAnswer = false

    /// Triggers Apple sends while the subscription runs.
    static func decidesWhileSubscribed(_ campaign: ReclaimConfig.Campaign) -> Bool {
        (try? CampaignTrigger(parsing: campaign.trigger)).map { ["SUBSCRIBED", "DID_RENEW", "OFFER_REDEEMED"].contains($0.type) } == true
    }

    /// A notification type Apple documents, with or without a subtype.
    static func claims(trigger: String) -> Bool {
        NotificationType.documented.contains(String(trigger.prefix { $0 != "/" }))
    }

    static func domain(_ campaign: ReclaimConfig.Campaign, basics: CampaignBasics) throws -> any CampaignKind {
        var basics = basics
        basics.variants =
            campaign.variants.map { variants in
                variants.map {
                    $0.offer?.variant(id: $0.id, weight: $0.weight)
                        ?? CampaignVariant(id: $0.id, productId: "", offerIdentifier: "", weight: $0.weight)
                }
            } ?? campaign.offer.map { [$0.variant(id: "", weight: 1)] } ?? [CampaignVariant(id: "", productId: "", offerIdentifier: "")]
        return NotificationCampaign(
            basics,
            trigger: try CampaignTrigger(parsing: campaign.trigger),
            deliverableFor: TimeInterval(campaign.deliverableFor.seconds),
            delay: TimeInterval(campaign.delay.seconds),
            window: campaign.window.map { TimeInterval($0.seconds) },
            commitmentLead: TimeInterval(campaign.commitmentLead.seconds)
        )
    }

    static func problems(_ campaign: ReclaimConfig.Campaign) -> [(key: String, reason: String)] {
        var problems: [(key: String, reason: String)] = []
        do {
            _ = try CampaignTrigger(parsing: campaign.trigger)
        } catch {
            // The domain names Apple's types and the cancel sheet; the kinds added since are the config's to name.
            let others = ReclaimConfig.Campaign.kinds.compactMap { $0.trigger }.filter { $0 != CampaignTrigger.retentionMessaging.type }
            let namesKinds = error.description.hasSuffix("nor \(CampaignTrigger.retentionMessaging.type) (the cancel sheet)")
            problems.append(("trigger", error.description + (namesKinds ? others.map { ", nor \($0)" }.joined() : "")))
        }
        for (key, given) in [
            ("message", campaign.message != nil), ("switchTo", campaign.switchTo != nil),
            ("offerSignature", campaign.offerSignature != nil), ("shadow", campaign.shadow),
        ] where given {
            problems.append((key, "applies to a cancel-sheet campaign (trigger: RETENTION_MESSAGING) only"))
        }
        problems += reasonsProblem(campaign)
        for (position, variant) in (campaign.variants ?? []).enumerated() {
            for (key, given) in [
                ("message", variant.message != nil), ("switchTo", variant.switchTo != nil),
                ("messageIdentifier", variant.messageIdentifier != nil),
            ] where given {
                problems.append(("variants[\(position)].\(key)", "applies to a cancel-sheet campaign (trigger: RETENTION_MESSAGING) only"))
            }
        }
        switch (campaign.offer, campaign.variants) {
        case (let offer?, nil):
            problems += offer.problems(at: "offer.")
        case (nil, let variants?):
            if variants.isEmpty { problems.append(("variants", "is empty: list the offers to compare, or give one offer")) }
            var variantIds = Set<String>()
            for (position, variant) in variants.enumerated() {
                let key = "variants[\(position)]"
                if variant.id.isEmpty { problems.append(("\(key).id", "must not be empty")) }
                if !variantIds.insert(variant.id).inserted { problems.append(("\(key).id", "\(variant.id) is listed twice")) }
                if let offer = variant.offer {
                    problems += offer.problems(at: "\(key).offer.")
                } else {
                    problems.append(("\(key).offer", "missing: each variant names its offer"))
                }
                if !(1...1_000_000).contains(variant.weight) {
                    problems.append(("\(key).weight", "must be from 1 to 1000000, got \(variant.weight)"))
                }
            }
        case (nil, nil):
            problems.append(("offer", "missing: give the offer, or variants to compare"))
        case (.some, .some):
            problems.append(("variants", "give either offer or variants, not both: each variant names its offer"))
        }
        return problems
    }

    static func appProblems(_ campaign: ReclaimConfig.Campaign, app: ReclaimConfig.App) -> [(key: String, reason: String)] {
        signingProblems(campaign, app: app, signs: !campaign.handsOutCodesOnly, storeKit2: true)
    }
}
