import Foundation

/// What Reclaim answers Apple's `CONSUMPTION_REQUEST`: Send Consumption Information's body, `ConsumptionRequest`
/// (App Store Server API 1.19+), field for field. Apple: "customerConsented", "deliveryStatus" and
/// "sampleContentProvided" are required; "consumptionPercentage" and "refundPreference" optional, and left out of the
/// JSON when nil (as Apple's app-store-server-library does).
public struct ConsumptionRequestBody: Codable, Sendable, Equatable {
    /// Always `true`: "If not, don't respond to the CONSUMPTION_REQUEST notification" (customerConsented), and
    /// "The App Store server rejects requests that have a customerConsented value other than true".
    public var customerConsented: Bool
    /// Milliunits, 0…100,000. Never for an auto-renewable subscription: "Don't provide a consumption percentage for
    /// auto-renewable subscriptions, otherwise the request fails with an HTTP 400 error
    /// ConsumptionPercentageAutoRenewableSubscriptionError."
    public var consumptionPercentage: Int?
    /// DELIVERED, UNDELIVERED_QUALITY_ISSUE, UNDELIVERED_WRONG_ITEM, UNDELIVERED_SERVER_OUTAGE, UNDELIVERED_OTHER.
    public var deliveryStatus: String
    /// DECLINE, GRANT_FULL, GRANT_PRORATED; nil states no preference.
    public var refundPreference: String?
    /// "whether you provided, prior to its purchase, a free sample or trial of the content, or information about its
    /// functionality".
    public var sampleContentProvided: Bool

    public init(consumptionPercentage: Int? = nil, deliveryStatus: String, refundPreference: String?, sampleContentProvided: Bool) {
        self.customerConsented = true
        self.consumptionPercentage = consumptionPercentage
        self.deliveryStatus = deliveryStatus
        self.refundPreference = refundPreference
        self.sampleContentProvided = sampleContentProvided
    }

    public static let deliveryStatuses = [
        "DELIVERED", "UNDELIVERED_QUALITY_ISSUE", "UNDELIVERED_WRONG_ITEM", "UNDELIVERED_SERVER_OUTAGE", "UNDELIVERED_OTHER",
    ]
    public static let refundPreferences = ["DECLINE", "GRANT_FULL", "GRANT_PRORATED"]

    /// The JSON sent, keys sorted (what `reclaim.refund_requests.body` keeps).
    public func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }
}

/// What Reclaim knows of a refund request when it decides the answer.
public struct RefundFacts: Sendable, Equatable {
    public var productId: String?
    /// Apple's transaction `type`: "Auto-Renewable Subscription", "Non-Consumable", "Consumable", "Non-Renewing Subscription".
    public var productType: String?
    public var storefront: String?
    /// Apple's `consumptionRequestReason`: UNINTENDED_PURCHASE, FULFILLMENT_ISSUE, UNSATISFIED_WITH_PURCHASE, LEGAL, OTHER.
    public var reason: String?
    /// The refunded transaction's purchaseDate, and the subscription's first (originalPurchaseDate).
    public var purchaseDate: Date?
    public var originalPurchaseDate: Date?
    /// Refunds of this subscriber Reclaim has seen before (REFUND notifications).
    public var earlierRefunds: Int
    /// Whether an offer (introductory, promotional, offer code, win-back: Apple's `offerType`) priced the refunded period.
    public var discountRedeemed: Bool
    /// Whether a free trial appears on the transaction or in the subscriber's stored history.
    public var freeTrialSeen: Bool
    /// The refunded transaction's `billingPlanType` (MONTHLY: a 12-month commitment; BILLED_UPFRONT); nil: not named.
    public var billingPlanType: String?
    /// Whether the refunded period is the current one or a past one (``BillingPeriod``); nil: not a subscription,
    /// or no expiresDate.
    public var billingPeriod: BillingPeriod?
    public var now: Date

    /// Which period a refund request is for. Apple, on monthly plans with a 12-month commitment: refunding the current
    /// period ends the commitment ("the commitment ends immediately"), a past period's does not. The current period is
    /// the one whose transaction had not expired when Apple signed the request.
    public enum BillingPeriod: String, Sendable, CaseIterable {
        case current, past

        public init?(expiresDate: Date?, requestedAt: Date) {
            guard let expiresDate else { return nil }
            self = expiresDate > requestedAt ? .current : .past
        }
    }

    public init(
        productId: String?,
        productType: String?,
        storefront: String?,
        reason: String?,
        purchaseDate: Date?,
        originalPurchaseDate: Date?,
        earlierRefunds: Int,
        discountRedeemed: Bool,
        freeTrialSeen: Bool,
        billingPlanType: String? = nil,
        billingPeriod: BillingPeriod? = nil,
        now: Date
    ) {
        self.billingPlanType = billingPlanType
        self.billingPeriod = billingPeriod
        self.productId = productId
        self.productType = productType
        self.storefront = storefront
        self.reason = reason
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.earlierRefunds = earlierRefunds
        self.discountRedeemed = discountRedeemed
        self.freeTrialSeen = freeTrialSeen
        self.now = now
    }

    public var isAutoRenewable: Bool { productType == "Auto-Renewable Subscription" }
}

/// Conditions of a refund policy; every one given must hold, a missing one holds.
public struct RefundConditions: Sendable, Equatable {
    public var products: [String]?
    public var productTypes: [String]?
    public var storefronts: [String]?
    public var reasons: [String]?
    /// Since the refunded transaction's purchase, at least this long (seconds; `minimumSincePurchase` in the config).
    public var minimumSincePurchase: Int64?
    /// At most this long.
    public var maximumSincePurchase: Int64?
    /// Since the subscription's first purchase, at least this long (seconds), as a campaign's `minimumTenure`.
    public var minimumTenure: Int64?
    /// At most this long.
    public var maximumTenure: Int64?
    public var maxEarlierRefunds: Int?
    public var discountRedeemed: Bool?
    /// The refunded transaction's billing plan is one of these (MONTHLY, BILLED_UPFRONT); an unknown plan matches none.
    public var billingPlans: [String]?
    /// The refunded period is one of these (current, past); a request of unknown period matches none.
    public var billingPeriods: [RefundFacts.BillingPeriod]?

    public init() {}

    public func hold(for facts: RefundFacts) -> Bool {
        func within(_ seconds: Double?, _ low: Int64?, _ high: Int64?) -> Bool {
            guard low != nil || high != nil else { return true }
            guard let seconds else { return false }  // Unknown dates meet no bound.
            return seconds >= Double(low ?? 0) && (high.map { seconds <= Double($0) } ?? true)
        }
        if let products, !products.contains(facts.productId ?? "") { return false }
        if let productTypes, !productTypes.contains(facts.productType ?? "") { return false }
        if let storefronts, !storefronts.contains(facts.storefront ?? "") { return false }
        if let reasons, !reasons.contains(facts.reason ?? "") { return false }
        let sincePurchase = facts.purchaseDate.map { facts.now.timeIntervalSince($0) }
        let tenure = facts.originalPurchaseDate.map { facts.now.timeIntervalSince($0) }
        guard within(sincePurchase, minimumSincePurchase, maximumSincePurchase), within(tenure, minimumTenure, maximumTenure) else { return false }
        if let maxEarlierRefunds, facts.earlierRefunds > maxEarlierRefunds { return false }
        if let discountRedeemed, facts.discountRedeemed != discountRedeemed { return false }
        if let billingPlans, !billingPlans.contains(facts.billingPlanType ?? "") { return false }
        if let billingPeriods, !billingPeriods.contains(where: { $0 == facts.billingPeriod }) { return false }
        return true
    }
}

/// One policy: when its conditions hold, the answer it gives.
public struct RefundPolicy: Sendable, Equatable {
    public var id: String
    public var conditions: RefundConditions
    public var refundPreference: String?
    public var deliveryStatus: String
    /// nil: derived (a free trial seen).
    public var sampleContentProvided: Bool?
    public var consumptionPercentage: Int?

    public init(
        id: String,
        conditions: RefundConditions = RefundConditions(),
        refundPreference: String? = nil,
        deliveryStatus: String = "DELIVERED",
        sampleContentProvided: Bool? = nil,
        consumptionPercentage: Int? = nil
    ) {
        self.id = id
        self.conditions = conditions
        self.refundPreference = refundPreference
        self.deliveryStatus = deliveryStatus
        self.sampleContentProvided = sampleContentProvided
        self.consumptionPercentage = consumptionPercentage
    }
}

/// What the operator vouches for when no policy matches a request (and for a held-out request no policy would have
/// matched): `refunds.default`. Without it such a request is not answered: Apple requires `deliveryStatus` and
/// `sampleContentProvided` and has no "unknown" value for either, and Reclaim does not know them.
public struct RefundDefault: Sendable, Equatable {
    public var deliveryStatus: String
    public var sampleContentProvided: Bool

    public init(deliveryStatus: String, sampleContentProvided: Bool) {
        self.deliveryStatus = deliveryStatus
        self.sampleContentProvided = sampleContentProvided
    }
}

/// The answer decided for one request: which arm, which policy, and the body, or why none is sent.
public struct RefundDecision: Sendable, Equatable {
    /// `policy` (a policy matched), `holdout` (the control group: the facts, no preference) or `unmatched` (no
    /// policy matched: the default's facts, no preference).
    public var arm: String
    /// The policy that answers (arm `policy`).
    public var policyId: String?
    /// For a held-out request: the policy whose conditions held, whose facts it is answered with and against whose
    /// requests it is compared; ``RefundPolicies/noPolicy`` when none held.
    public var counterpart: String?
    /// The answer to send; nil when none is (``unanswered`` says why).
    public var body: ConsumptionRequestBody?
    /// Why no answer is sent: Reclaim would have had to state a fact it does not know.
    public var unanswered: String?
}

/// An app's refund policies, tried in order, its default and its holdout.
public struct RefundPolicies: Sendable, Equatable {
    public var holdoutPercent: Int
    public var policies: [RefundPolicy]
    public var fallback: RefundDefault?

    public init(holdoutPercent: Int, policies: [RefundPolicy], fallback: RefundDefault? = nil) {
        self.holdoutPercent = holdoutPercent
        self.policies = policies
        self.fallback = fallback
    }

    /// The holdout is per subscriber (the same subscriber's requests stay in one arm), drawn apart from every
    /// campaign's.
    public static let holdoutKey = "refunds"
    /// A held-out request's counterpart when no policy's conditions held.
    public static let noPolicy = "(no policy)"
    /// Apple's `consumptionRequestReason` for "a fulfillment issue": the customer says the content was not delivered.
    public static let fulfillmentIssue = "FULFILLMENT_ISSUE"

    public func decide(originalTransactionId: String, facts: RefundFacts) -> RefundDecision {
        let matched = policies.first { $0.conditions.hold(for: facts) }
        let heldOut = Holdout.isHeldOut(originalTransactionId: originalTransactionId, campaignId: Self.holdoutKey, percent: holdoutPercent)
        // The control group gets the facts the matching policy states, without its preference: the experiment measures
        // the preference, so the two arms differ in that alone (answering nothing would also withhold the delivery
        // facts Apple asked for). Each held-out request names that policy, so each policy is compared with its own.
        if heldOut {
            var decision = answer(arm: "holdout", policy: matched, preference: false, facts: facts)
            decision.counterpart = matched?.id ?? Self.noPolicy
            return decision
        }
        return answer(arm: matched == nil ? "unmatched" : "policy", policy: matched, preference: true, facts: facts)
    }

    /// The answer a policy gives (its preference only when `preference`), or the default's facts without one.
    private func answer(arm: String, policy: RefundPolicy?, preference: Bool, facts: RefundFacts) -> RefundDecision {
        var decision = RefundDecision(arm: arm, policyId: arm == "policy" ? policy?.id : nil)
        guard let policy else {
            guard let fallback else {
                decision.unanswered =
                    "no policy's conditions held and refunds has no default: Reclaim does not know the deliveryStatus and sampleContentProvided Apple requires"
                return decision
            }
            return Self.checked(
                decision,
                body: .init(deliveryStatus: fallback.deliveryStatus, refundPreference: nil, sampleContentProvided: fallback.sampleContentProvided),
                facts: facts,
                statedFor: nil
            )
        }
        var percentage = policy.consumptionPercentage
        var refundPreference = preference ? policy.refundPreference : nil
        if facts.isAutoRenewable {
            // "The system calculates the consumption automatically for auto-renewable subscriptions."
            percentage = nil
        } else if refundPreference == "GRANT_PRORATED", !(1...99_999).contains(percentage ?? 0) {
            // "If you select GRANT_PRORATED for the refundPreference field, you need to provide a
            // consumptionPercentage greater than 0 and less than 100000": without one, no preference is stated.
            refundPreference = nil
        }
        if policy.deliveryStatus != "DELIVERED", percentage != nil {
            // "If the deliveryStatus value isn't DELIVERED, set the consumptionPercentage to 0".
            percentage = 0
        }
        return Self.checked(
            decision,
            body: .init(
                consumptionPercentage: percentage,
                deliveryStatus: policy.deliveryStatus,
                refundPreference: refundPreference,
                sampleContentProvided: policy.sampleContentProvided ?? facts.freeTrialSeen
            ),
            facts: facts,
            statedFor: policy.conditions.reasons
        )
    }

    /// A customer who reports a fulfilment issue is never told `DELIVERED` unless a policy for that reason says so
    /// (`conditions.reasons` names it): a general policy or the default states delivery without having looked. Apple's
    /// `deliveryStatus` is "A value that indicates whether the app successfully delivered an In-App Purchase that works
    /// properly", required, and has no "unknown": a request whose answer Reclaim cannot vouch for is not answered.
    private static func checked(
        _ decision: RefundDecision,
        body: ConsumptionRequestBody,
        facts: RefundFacts,
        statedFor reasons: [String]?
    ) -> RefundDecision {
        var decision = decision
        if facts.reason == fulfillmentIssue, body.deliveryStatus == "DELIVERED", reasons?.contains(fulfillmentIssue) != true {
            decision.unanswered =
                "the customer reports a fulfilment issue (FULFILLMENT_ISSUE) and no policy for that reason states DELIVERED: Reclaim does not know whether the content was delivered"
            return decision
        }
        decision.body = body
        return decision
    }
}

extension RefundDecision {
    init(arm: String, policyId: String?) {
        self.init(arm: arm, policyId: policyId, counterpart: nil, body: nil, unanswered: nil)
    }
}
