import Foundation
import ReclaimDomain

extension ReclaimConfig {
    /// The configured campaigns as the rules see them, each as its kind's type (``ReclaimConfig/Campaign/kind``).
    /// Call on a validated config (``validate(source:)`` refuses what this cannot convert).
    public func domainCampaigns() throws -> [any CampaignKind] {
        try campaigns.map { campaign in
            let basics = CampaignBasics(
                id: campaign.id,
                bundleId: campaign.app,
                conditions: campaign.conditions,
                variants: [],
                cooldown: TimeInterval(campaign.cooldown.seconds),
                maxOffersPerSubscriber: campaign.maxOffersPerSubscriber,
                holdoutPercent: campaign.holdoutPercent,
                priority: campaign.priority,
                startsAt: try campaign.startsAt.map { try Self.date($0) },
                endsAt: try campaign.endsAt.map { try Self.date($0) },
                standAsideForWinBack: campaign.standAsideForWinBack,
                discountBudget: apps.first { $0.bundleId == campaign.app }?.discountBudget?.domain
            )
            return try campaign.kind.domain(campaign, basics: basics)
        }
    }

    /// The campaigns Apple's notifications fire (``CampaignEvaluator``).
    public func notificationCampaigns() throws -> [NotificationCampaign] { try domainCampaigns().of(NotificationCampaign.self) }

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
                for (key, reason) in campaign.kind.appProblems(campaign, app: app) { problem(key, reason) }
            } else {
                problem("app", "\(campaign.app) is not configured under apps")
            }
            for (key, reason) in campaign.kind.problems(campaign) { problem(key, reason) }
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
            if conditions.lapsedWithin != nil, campaign.kind.decidesWhileSubscribed(campaign) {
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
