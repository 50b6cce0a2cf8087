import Foundation

/// An app's one discount budget per subscriber (`apps[].discountBudget`): at most `redemptions` discounted offers
/// redeemed in any rolling `window`, across every door (Reclaim's offers, offer codes, Apple's win-back offers, App
/// Store Connect's retention offers). Campaigns, grants and the cancel sheet hold back a discount that would exceed it.
public struct DiscountBudget: Sendable, Equatable {
    public var redemptions: Int
    public var window: TimeInterval

    public init(redemptions: Int, window: TimeInterval) {
        self.redemptions = redemptions
        self.window = window
    }

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
            "discount budget: \(recent.count) discounted offer\(recent.count == 1 ? "" : "s") redeemed in the last "
            + "\(CampaignEvaluatorFormat.duration(window)) (\(recent.sorted().joined(separator: ", "))), budget \(redemptions)"
    }
}
