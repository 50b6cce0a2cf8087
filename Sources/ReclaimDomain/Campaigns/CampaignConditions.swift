import Foundation

/// Who qualifies for a campaign beyond its trigger. Every condition that is set must hold; nil means any.
///
/// The config's `campaigns[].conditions` decode straight into this type (durations as the config writes them, e.g.
/// `180d`); it is stored as JSON in `reclaim.campaigns.conditions` under ``CodingKeys``, whose two duration keys keep
/// the names the stored JSON always had (`minimumTenureSeconds`, `lapsedWithinSeconds`: seconds).
public struct CampaignConditions: Sendable, Equatable, Codable {
    /// The subscription's current product is one of these.
    public var products: [String]?
    /// The subscriber first bought at least this long before the trigger (seconds).
    public var minimumTenure: Int64?
    /// Renewal info expirationIntent is one of these (1 cancelled, 2 billing error, 3 price increase, 4 product
    /// unavailable, 5 other).
    public var expirationIntents: [Int]?
    /// The subscription's storefront (three letters, e.g. USA) is one of these.
    public var storefronts: [String]?
    /// The subscription expired (its stored expiresDate is past) no longer than this before the decision (seconds):
    /// a base imported by `reclaim backfill --evaluate` offers to recent lapsers only, not to everyone who ever left.
    public var lapsedWithin: Int64?
    /// The subscription's billing plan (`billingPlanType`, e.g. MONTHLY or BILLED_UPFRONT) is one of these; a
    /// subscription whose plan is unknown matches none.
    public var billingPlans: [String]?
    /// The subscription is active (or in its billing grace period) and its period ends no further from the decision
    /// than this (seconds): the end is the later of `expiresDate` and the grace period's end, or a commitment's end
    /// when the customer pays on until it (``SubscriptionState/periodEnd``). A trigger whose end is further away is
    /// deferred, not skipped (``CampaignEvaluator/expiryDeferrals(campaigns:state:event:now:)``): an imported
    /// cancellation of a yearly plan is answered 14 days before its end, not 11 months early.
    public var expiresWithin: Int64?

    /// The stored JSON's keys (reclaim.campaigns.conditions), unchanged since schema 3: dashboards read them.
    public enum CodingKeys: String, CodingKey, CaseIterable {
        case products, expirationIntents, storefronts, billingPlans
        case minimumTenure = "minimumTenureSeconds"
        case lapsedWithin = "lapsedWithinSeconds"
        case expiresWithin = "expiresWithinSeconds"
    }

    public init(
        products: [String]? = nil,
        minimumTenure: Int64? = nil,
        expirationIntents: [Int]? = nil,
        storefronts: [String]? = nil,
        lapsedWithin: Int64? = nil,
        billingPlans: [String]? = nil,
        expiresWithin: Int64? = nil
    ) {
        self.expiresWithin = expiresWithin
        self.billingPlans = billingPlans
        self.products = products
        self.minimumTenure = minimumTenure
        self.expirationIntents = expirationIntents
        self.storefronts = storefronts
        self.lapsedWithin = lapsedWithin
    }

    /// nil when the subscriber qualifies, else the reason they do not. Tenure is measured at the trigger (`time`);
    /// the lapse at the decision (`now`: a delayed campaign's fire time), since what matters is how long ago the
    /// subscriber left when the offer is made.
    func unmet(by state: SubscriptionState, at time: Date, now: Date) -> String? {
        if let products, !products.contains(state.productId ?? "") {
            return "product \(state.productId ?? "unknown") is not one of \(products.joined(separator: ", "))"
        }
        if let minimumTenure {
            guard let firstPurchaseAt = state.firstPurchaseAt else { return "tenure unknown: no originalPurchaseDate seen" }
            let tenure = time.timeIntervalSince(firstPurchaseAt)
            if tenure < Double(minimumTenure) {
                return "tenure \(Int(tenure / 86_400))d is below the minimum \(minimumTenure / 86_400)d"
            }
        }
        if let expirationIntents, !expirationIntents.contains(state.expirationIntent ?? 0) {
            return
                "expirationIntent \(state.expirationIntent.map(String.init) ?? "none") is not one of \(expirationIntents.map(String.init).joined(separator: ", "))"
        }
        if let storefronts, !storefronts.contains(state.storefront ?? "") {
            return "storefront \(state.storefront ?? "unknown") is not one of \(storefronts.joined(separator: ", "))"
        }
        if let billingPlans, !billingPlans.contains(state.billingPlanType ?? "") {
            return "billing plan \(state.billingPlanType ?? "unknown") is not one of \(billingPlans.joined(separator: ", "))"
        }
        if let lapsedWithin {
            guard let expiresAt = state.expiresAt else { return "lapsedWithin: expiry unknown (no expiresDate seen)" }
            guard expiresAt <= now else { return "lapsedWithin: not expired (expires \(CampaignEvaluator.iso(expiresAt)))" }
            let lapsed = now.timeIntervalSince(expiresAt)
            if lapsed > Double(lapsedWithin) {
                let ago = lapsed >= 86_400 ? "\(Int(lapsed / 86_400))d" : "\(Int(lapsed / 3600))h"
                return "lapsedWithin: expired \(ago) ago, more than \(CampaignEvaluator.duration(TimeInterval(lapsedWithin)))"
            }
        }
        if let expiresWithin {
            guard state.status == .active || state.status == .gracePeriod else {
                return "expiresWithin: the subscription is \(state.status.rawValue), not active"
            }
            guard let end = state.periodEnd(after: now) else { return "expiresWithin: period end unknown (no expiresDate seen)" }
            let left = end.timeIntervalSince(now)
            if left > Double(expiresWithin) {
                return
                    "expiresWithin: the period ends \(CampaignEvaluator.iso(end)), more than \(CampaignEvaluator.duration(TimeInterval(expiresWithin))) away"
            }
        }
        return nil
    }
}

extension SubscriptionState {
    /// When the subscriber's paid time ends as of `time`: a commitment that will not renew runs to its end (the
    /// customer pays on monthly until it); otherwise the later of the period's `expiresDate` and the grace period's
    /// end. nil when no expiry is known.
    public func periodEnd(after time: Date) -> Date? {
        if let commitment = commitmentEndsWithoutRenewal(after: time) { return commitment }
        switch (expiresAt, gracePeriodExpiresAt) {
        case (let period?, let grace?): return max(period, grace)
        case (let period?, nil): return period
        case (nil, let grace?): return grace
        case (nil, nil): return nil
        }
    }
}
