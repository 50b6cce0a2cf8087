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
    /// "3 months"; "month" alone after a slash ("$1.99/month").
    func length(_ period: Product.SubscriptionPeriod, times count: Int = 1, perUnit: Bool = false) -> String {
        let value = period.value * count
        if value == 1 { return perUnit ? unit(period.unit) : "1 \(unit(period.unit))" }
        return "\(value) \(unit(period.unit))s"
    }
    let regular = product.subscription.map { "\(product.displayPrice)/\(length($0.subscriptionPeriod, perUnit: true))" } ?? product.displayPrice
    switch offer.paymentMode {
    case .freeTrial:
        return "Free for \(length(offer.period)), then \(regular)"
    case .payUpFront:
        return "\(offer.displayPrice) for the first \(length(offer.period)), then \(regular)"
    case .payAsYouGo:
        return "\(offer.displayPrice)/\(length(offer.period, perUnit: true)) for \(length(offer.period, times: offer.periodCount)), then \(regular)"
    default:
        return "\(offer.displayPrice) for \(length(offer.period, times: offer.periodCount)), then \(regular)"
    }
}
