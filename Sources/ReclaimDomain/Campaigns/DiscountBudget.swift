import Foundation

/// An app's one discount budget per subscriber (`apps[].discountBudget`): at most `redemptions` discounted offers
/// redeemed in any rolling `window`, across every door (Reclaim's offers, offer codes, Apple's win-back offers, App
/// Store Connect's retention offers). Campaigns, grants and the cancel sheet hold back a discount that would exceed it.
public struct DiscountBudget: Sendable, Equatable {
    public var redemptions: Int
    public var window: TimeInterval
    /// Another budget for subscriptions of a billing plan (`MONTHLY`, `BILLED_UPFRONT`), e.g. a stricter one for
    /// monthly payments with a 12-month commitment, whose customer pays every month until the commitment ends.
    public var byPlan: [String: DiscountBudget]
    /// The plan this budget is for (nil: every plan ``byPlan`` does not name); named in the hold-back reason.
    public var plan: String?

    public init(redemptions: Int, window: TimeInterval, byPlan: [String: DiscountBudget] = [:], plan: String? = nil) {
        self.redemptions = redemptions
        self.window = window
        self.byPlan = byPlan
        self.plan = plan
    }

    /// The budget a subscription of `plan` (Apple's `billingPlanType`; nil: unknown) is held to.
    public func forPlan(_ plan: String?) -> DiscountBudget { plan.flatMap { byPlan[$0] } ?? self }

    /// A discounted redemption of the subscriber: when, and which offer (its type and identifier: a pay-as-you-go
    /// offer's renewals are one offer).
    public struct Spent: Sendable, Equatable {
        public var at: Date
        public var offer: String

        public init(at: Date, offer: String) {
            self.at = at
            self.offer = offer
        }
    }

    /// Why a new discount at `time` is held back, or nil when the budget allows it.
    public func exhausted(by spent: [Spent], at time: Date) -> String? {
        let recent = Set(spent.filter { $0.at > time.addingTimeInterval(-window) && $0.at <= time }.map(\.offer))
        guard recent.count >= redemptions else { return nil }
        return
            "discount budget\(plan.map { " of \($0) plans" } ?? ""): \(recent.count) discounted offer\(recent.count == 1 ? "" : "s") redeemed in the last "
            + "\(CampaignEvaluatorFormat.duration(window)) (\(recent.sorted().joined(separator: ", "))), budget \(redemptions)"
    }
}
