import Foundation

/// One-time-use offer codes: made in App Store Connect for an offer-code offer, imported into a pool (`reclaim codes
/// import`), one handed out per offered decision of a campaign with `offer.offerCodes`, and sent by the team's own
/// email or push through the `offer.issued` webhook. Apple (StoreKit, "Supporting offer codes in your app"): customers
/// "can redeem offer codes throught a redemption URL, or by entering the code directly in the App Store, or within your
/// app"; App Store Connect Help: "each customer can redeem one code per offer". A redemption is a transaction with
/// `offerType` 3 whose `offerIdentifier` is the offer's reference name, not the code.
public enum OfferCodes {
    /// Apple's `offerType` of an offer-code redemption.
    public static let offerType: Int64 = 3

    /// Who may redeem an offer's codes: App Store Connect API `SubscriptionCustomerEligibility` (`NEW`, `EXISTING`,
    /// `EXPIRED`), chosen per offer in App Store Connect.
    public enum Eligibility: String, Sendable, CaseIterable, Comparable {
        case new, existing, expired

        public static func < (a: Self, b: Self) -> Bool { allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)! }

        /// `new`, `existing,expired`, …: a comma-separated list, each once.
        public static func parse(_ text: String) -> [Eligibility]? {
            let parts = text.lowercased().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            let values = parts.compactMap(Eligibility.init(rawValue:))
            guard !values.isEmpty, values.count == parts.count, Set(values).count == values.count else { return nil }
            return values.sorted()
        }

        /// The eligibility a subscriber has when `trigger` fires: `expired` after the subscription ended (EXPIRED,
        /// GRACE_PERIOD_EXPIRED, REFUND, REVOKE), `existing` while it runs (a renewal-status change, a billing failure in
        /// its grace period or retry, a price increase). Never `new`: a campaign's subscriber has or had a subscription.
        public static func of(_ trigger: CampaignTrigger) -> Eligibility {
            ["EXPIRED", "GRACE_PERIOD_EXPIRED", "REFUND", "REVOKE"].contains(trigger.type) ? .expired : .existing
        }
    }

    /// What a subscriber can be given, read by the worker for the subscribers of a batch whose campaigns hand out codes.
    public struct Context: Sendable, Equatable {
        /// Offers (reference names) of the subscriber's app and environment whose pool has an unused code valid long
        /// enough.
        public var available: Set<String>
        /// Offers the subscriber was given a code of, or redeemed (Apple: one code per customer per offer).
        public var given: Set<String>

        public init(available: Set<String> = [], given: Set<String> = []) {
            self.available = available
            self.given = given
        }
    }

    /// Why a campaign's codes cannot go to this subscriber, or nil: every arm's pool has a code for them. Checked
    /// before the holdout for every arm, so that the control group and the treated stay alike when a pool runs dry.
    public static func skipReason(_ campaign: NotificationCampaign, context: Context?) -> String? {
        guard let context else { return nil }
        for offer in Set(campaign.variants.compactMap(\.offerCodes)).sorted() {
            if context.given.contains(offer) {
                return "offer code already given: this subscriber had a code of \(offer) (Apple lets each customer redeem one code per offer)"
            }
            if !context.available.contains(offer) {
                return "no code left: the pool of \(offer) has no unused code valid through the delivery window (reclaim codes status)"
            }
        }
        return nil
    }

    /// A code's redemption URL from the pool's template (`{code}` stands for the code).
    public static func redemptionURL(template: String, code: String) -> String {
        template.replacingOccurrences(of: "{code}", with: code)
    }

    /// The template a pool gets unless `--redemption-url` gives another: the form App Store Connect gives with
    /// downloaded one-time-use codes. Apple's developer documentation names redemption URLs ("through a redemption
    /// URL") without giving their form, so it is a pool setting, this its default.
    public static func defaultRedemptionURL(appAppleId: Int64) -> String {
        "https://apps.apple.com/redeem?ctx=offercodes&id=\(appAppleId)&code={code}"
    }

    /// A code as stored: trimmed, upper case. Apple's codes are alphanumeric ("Offer codes are alphanumeric codes").
    public static func normalized(_ text: String) -> String? {
        let code = text.trimmingCharacters(in: .whitespacesAndNewlines).uppercased()
        guard (1...64).contains(code.count), code.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else { return nil }
        return code
    }

    /// The codes of an App Store Connect download: one per line, or the first column of a CSV; a header line (a
    /// first line that is not a code, e.g. `Code`) and blank lines are skipped. Any other line that is not a code is
    /// an error naming its line number (never the line: it may be a code with a typo).
    public static func parseFile(_ text: String) throws(InvalidInput) -> [String] {
        var codes: [String] = []
        var seen = Set<String>()
        for (index, line) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let field = line.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            let trimmed = field.trimmingCharacters(in: CharacterSet.whitespaces.union(CharacterSet(charactersIn: "\"\u{FEFF}")))
            if trimmed.isEmpty { continue }
            guard let code = normalized(trimmed), !(index == 0 && ["CODE", "CODES", "OFFERCODE", "OFFERCODES"].contains(code)) else {
                if index == 0 { continue }
                throw InvalidInput("line \(index + 1) is not an offer code (1 to 64 letters and digits)")
            }
            if seen.insert(code).inserted { codes.append(code) }
        }
        return codes
    }
}
