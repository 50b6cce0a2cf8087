import Foundation
import StoreKit

/// The offer's terms for the paywall, from the App Store's own description of it: the price, for how long and how it
/// is paid, then the regular price the subscription renews at. App Review Guideline 3.1.2 asks a paywall to
/// "clearly describe what the user will get for the price", and Apple's design guidance to list an offer's price,
/// its duration and the standard price after it. English here: localize it with the rest of your paywall.
func offerTerms(_ offer: Product.SubscriptionOffer, for product: Product) -> String {
    func unit(_ unit: Product.SubscriptionPeriod.Unit) -> String {
        switch unit {
        case .day: "day"
        case .week: "week"
        case .month: "month"
        case .year: "year"
        @unknown default: "period"
        }
    }
    /// "3 months", "1 week"; `each`: "month" and "3 months", as after a slash ("$1.99/month", "$9.99/3 months").
    func length(_ period: Product.SubscriptionPeriod, times count: Int = 1, each: Bool = false) -> String {
        let value = period.value * count
        if value == 1 { return each ? unit(period.unit) : "1 \(unit(period.unit))" }
        return "\(value) \(unit(period.unit))s"
    }
    /// "the first month", "the first 6 months".
    func first(_ period: Product.SubscriptionPeriod, times count: Int) -> String {
        "the first " + length(period, times: count, each: true)
    }
    let regular = product.subscription.map { "\(product.displayPrice)/\(length($0.subscriptionPeriod, each: true))" } ?? product.displayPrice
    let count = max(1, offer.periodCount)  // Apple: 1 for free trials and pay up front
    switch offer.paymentMode {
    case .freeTrial:
        return "Free for \(length(offer.period, times: count)), then \(regular)"
    case .payAsYouGo where count > 1:
        return "\(offer.displayPrice)/\(length(offer.period, each: true)) for \(first(offer.period, times: count)), then \(regular)"
    default:  // pay up front, or one period of pay as you go
        return "\(offer.displayPrice) for \(first(offer.period, times: count)), then \(regular)"
    }
}
