import Foundation
import ReclaimDomain

extension ReclaimConfig {
    /// The configured campaigns as the rules see them. Call on a validated config (``validate(source:)``
    /// refuses what this cannot convert).
    public func domainCampaigns() throws -> [ReclaimDomain.Campaign] {
        try campaigns.map { campaign in
            ReclaimDomain.Campaign(
                id: campaign.id,
                bundleId: campaign.app,
                trigger: try CampaignTrigger(parsing: campaign.trigger),
                conditions: campaign.conditions,
                productId: campaign.offer?.productId ?? "",
                offerIdentifier: campaign.offer?.offerIdentifier ?? "",
                deliverableFor: TimeInterval(campaign.deliverableFor.seconds),
                cooldown: TimeInterval(campaign.cooldown.seconds),
                maxOffersPerSubscriber: campaign.maxOffersPerSubscriber,
                holdoutPercent: campaign.holdoutPercent,
                priority: campaign.priority,
                startsAt: try campaign.startsAt.map { try Self.date($0) },
                endsAt: try campaign.endsAt.map { try Self.date($0) },
                standAsideForWinBack: campaign.standAsideForWinBack,
                variants: campaign.isCancelSheet
                    ? campaign.cancelSheetVariants()
                    : campaign.variants.map { variants in
                        variants.map {
                            $0.offer?.variant(id: $0.id, weight: $0.weight)
                                ?? CampaignVariant(id: $0.id, productId: "", offerIdentifier: "", weight: $0.weight)
                        }
                    } ?? campaign.offer.map { [$0.variant(id: "", weight: 1)] },
                delay: TimeInterval(campaign.delay.seconds),
                window: campaign.window.map { TimeInterval($0.seconds) },
                shadow: campaign.shadow,
                discountBudget: apps.first { $0.bundleId == campaign.app }?.discountBudget?.domain,
                saveWindow: TimeInterval(campaign.saveWindow.seconds),
                commitmentLead: TimeInterval(campaign.commitmentLead.seconds)
            )
        }
    }

    /// Every problem of every campaign, each naming the campaign, the key and the reason.
    func campaignProblems() -> [String] {
        var problems: [String] = []
        var ids = Set<String>()
        for (index, campaign) in campaigns.enumerated() {
            let name = campaign.id.isEmpty ? "campaigns[\(index)]" : "campaign \(campaign.id)"
            func problem(_ key: String, _ reason: String) { problems.append("\(name): \(key): \(reason)") }
            if campaign.id.isEmpty { problem("id", "must not be empty") }
            if !ids.insert(campaign.id).inserted { problem("id", "is listed twice") }
            if let app = apps.first(where: { $0.bundleId == campaign.app }) {
                // A cancel-sheet campaign signs only when an arm answers with an offer (V1 needs no issuerId).
                let signs = campaign.isCancelSheet ? campaign.cancelSheetSignsOffers : !campaign.handsOutCodesOnly
                let storeKit2 = !campaign.isCancelSheet || campaign.offerSignature ?? "v2" == "v2"
                if signs, app.signingKeys.isEmpty { problem("app", "app \(campaign.app) has no signingKeys to sign offers with") }
                if signs, storeKit2, (app.issuerId ?? "").isEmpty {
                    problem("app", "app \(campaign.app) has no issuerId, which StoreKit 2 offer signatures need")
                }
                if campaign.isCancelSheet, app.appAppleId == nil {
                    problem("app", "app \(campaign.app) has no appAppleId: Apple's realtime requests name the app by it")
                }
            } else {
                problem("app", "\(campaign.app) is not configured under apps")
            }
            do {
                _ = try CampaignTrigger(parsing: campaign.trigger)
            } catch {
                problem("trigger", error.description)
            }
            if campaign.isCancelSheet {
                for (key, reason) in campaign.cancelSheetProblems() { problem(key, reason) }
                // Apple's RealtimeResponseBody answers with a message, an alternate product or a promotional offer.
                for (path, offer) in campaign.offers where offer.offerCodes != nil {
                    problem(
                        "\(path)offerCodes",
                        "Apple's realtime answer to the cancel sheet has no offer code: hand out codes from a notification campaign"
                    )
                }
            } else {
                for (key, given) in [
                    ("message", campaign.message != nil), ("switchTo", campaign.switchTo != nil),
                    ("offerSignature", campaign.offerSignature != nil), ("shadow", campaign.shadow),
                ] where given {
                    problem(key, "applies to a cancel-sheet campaign (trigger: RETENTION_MESSAGING) only")
                }
                for (position, variant) in (campaign.variants ?? []).enumerated() {
                    for (key, given) in [
                        ("message", variant.message != nil), ("switchTo", variant.switchTo != nil),
                        ("messageIdentifier", variant.messageIdentifier != nil),
                    ] where given {
                        problem("variants[\(position)].\(key)", "applies to a cancel-sheet campaign (trigger: RETENTION_MESSAGING) only")
                    }
                }
            }
            switch (campaign.offer, campaign.variants) {
            case _ where campaign.isCancelSheet: break
            case (let offer?, nil):
                for (key, reason) in offer.problems(at: "offer.") { problem(key, reason) }
            case (nil, let variants?):
                if variants.isEmpty { problem("variants", "is empty: list the offers to compare, or give one offer") }
                var variantIds = Set<String>()
                for (position, variant) in variants.enumerated() {
                    let key = "variants[\(position)]"
                    if variant.id.isEmpty { problem("\(key).id", "must not be empty") }
                    if !variantIds.insert(variant.id).inserted { problem("\(key).id", "\(variant.id) is listed twice") }
                    if let offer = variant.offer {
                        for (key, reason) in offer.problems(at: "\(key).offer.") { problem(key, reason) }
                    } else {
                        problem("\(key).offer", "missing: each variant names its offer")
                    }
                    if !(1...1_000_000).contains(variant.weight) { problem("\(key).weight", "must be from 1 to 1000000, got \(variant.weight)") }
                }
            case (nil, nil):
                problem("offer", "missing: give the offer, or variants to compare")
            case (.some, .some):
                problem("variants", "give either offer or variants, not both: each variant names its offer")
            }
            if campaign.deliverableFor.seconds <= 0 { problem("deliverableFor", "must be positive") }
            if campaign.saveWindow.seconds < 86_400 || campaign.saveWindow.seconds > 400 * 86_400 { problem("saveWindow", "must be from 1d to 400d") }
            if campaign.delay.seconds < 0 { problem("delay", "must not be negative") }
            if let window = campaign.window {
                if campaign.delay.seconds == 0 { problem("window", "applies to a delayed campaign only: give delay too") }
                if window.seconds < campaign.delay.seconds { problem("window", "must be at least the delay (\(campaign.delay))") }
            }
            // A grant ranks at Int32.max above every campaign; the column is a PostgreSQL integer.
            if campaign.priority < -1_000_000 || campaign.priority > 1_000_000 {
                problem("priority", "must be from -1000000 to 1000000")
            }
            if !(0...100).contains(campaign.holdoutPercent) { problem("holdoutPercent", "must be 0…100, got \(campaign.holdoutPercent)") }
            if let maximum = campaign.maxOffersPerSubscriber, maximum < 1 || maximum > 1_000_000 {
                problem("maxOffersPerSubscriber", "must be at least 1 and at most 1000000 (leave it out for no limit)")
            }
            var window: [Date] = []
            for (key, text) in [("startsAt", campaign.startsAt), ("endsAt", campaign.endsAt)] {
                guard let text else { continue }
                do { window.append(try Self.date(text)) } catch { problem(key, "\(error)") }
            }
            if campaign.startsAt != nil, campaign.endsAt != nil, window.count == 2, window[0] >= window[1] {
                problem("endsAt", "must be after startsAt")
            }
            let conditions = campaign.conditions
            if let intents = conditions.expirationIntents, let bad = intents.first(where: { !(1...5).contains($0) }) {
                problem(
                    "conditions.expirationIntents",
                    "\(bad) is not an expirationIntent (1 cancelled, 2 billing error, 3 price increase, 4 product unavailable, 5 other)"
                )
            }
            if let storefronts = conditions.storefronts,
                let bad = storefronts.first(where: { $0.count != 3 || !$0.allSatisfy { $0.isASCII && $0.isUppercase } })
            {
                problem("conditions.storefronts", "'\(bad)' is not a three-letter storefront code such as USA")
            }
            if let products = conditions.products, products.isEmpty { problem("conditions.products", "is empty: no product would qualify") }
            // Apple's billingPlanType values (App Store Server API 1.21).
            for plan in conditions.billingPlans ?? [] where !Campaign.Offer.billingPlans.contains(plan) {
                problem("conditions.billingPlans", "\(plan) is not one of Apple's billing plans (MONTHLY, BILLED_UPFRONT)")
            }
            if conditions.billingPlans?.isEmpty == true { problem("conditions.billingPlans", "is empty: no subscription would qualify") }
            if campaign.commitmentLead.seconds < 0 || campaign.commitmentLead.seconds > 365 * 86_400 {
                problem("commitmentLead", "must be from 0s to 365d")
            }
            if let lapsed = conditions.lapsedWithin, lapsed < 3600 {
                problem(
                    "conditions.lapsedWithin",
                    "\(ConfigDuration(seconds: lapsed)) is shorter than an hour: hardly anyone would qualify (e.g. 30d)"
                )
            }
            if let within = conditions.expiresWithin, within < 3600 || within > 366 * 86_400 {
                problem("conditions.expiresWithin", "must be from 1h to 366d (e.g. 14d)")
            }
            if conditions.expiresWithin != nil, conditions.lapsedWithin != nil {
                problem("conditions.expiresWithin", "and lapsedWithin exclude each other: one needs a running subscription, the other a lapsed one")
            }
            if conditions.lapsedWithin != nil, let trigger = try? CampaignTrigger(parsing: campaign.trigger),
                ["RETENTION_MESSAGING", "SUBSCRIBED", "DID_RENEW", "OFFER_REDEEMED"].contains(trigger.type)
            {
                problem(
                    "conditions.lapsedWithin",
                    "trigger \(campaign.trigger) comes while the subscription runs: lapsedWithin needs an expired subscription, so it would never be met"
                )
            }
        }
        return problems + offerPlanProblems()
    }

    /// An ISO 8601 date-time (`2026-12-01T00:00:00Z`) or date (`2026-12-01`, midnight UTC).
    static func date(_ text: String) throws(ConfigError) -> Date {
        if let date = try? Date(text, strategy: .iso8601) { return date }
        if let date = try? Date(text + "T00:00:00Z", strategy: .iso8601) { return date }
        throw ConfigError("'\(text)' is not an ISO 8601 date such as 2026-12-01 or 2026-12-01T09:00:00Z")
    }
}
