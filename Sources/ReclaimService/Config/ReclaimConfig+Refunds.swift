// `apps[].refunds`: how Reclaim answers Apple's refund requests (CONSUMPTION_REQUEST). docs/refunds.md.
import Foundation
import ReclaimDomain

extension ReclaimConfig {
    /// An app's answers to Apple's refund requests; an app without it answers none.
    public struct Refunds: Decodable, Sendable {
        /// Only `terms`: the operator states that its terms obtain the customer's consent to share consumption data with
        /// Apple (a legal judgement that is the operator's). Apple: "If the customer provided consent, respond by calling
        /// this API … If not, don't respond to the CONSUMPTION_REQUEST notification."
        public var consent: String
        public var holdoutPercent: Int
        public var policies: [Policy]
        /// `default`: the facts the operator vouches for when no policy matches (and for held-out requests no policy
        /// would have matched). Without it those requests are not answered (`unanswered`).
        public var fallback: RefundDefault?

        enum CodingKeys: String, ConfigKeys { case consent, holdoutPercent, policies, `default` }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.configContainer(keyedBy: CodingKeys.self)
            consent = try container.decode(String.self, forKey: .consent)
            guard consent == "terms" else {
                throw DecodingError.dataCorruptedError(
                    forKey: .consent,
                    in: container,
                    debugDescription:
                        "\(consent): the only value is terms (your terms obtain the customer's consent to share consumption data with Apple); consent reported by the app itself is not supported yet"
                )
            }
            holdoutPercent = try container.decodeIfPresent(Int.self, forKey: .holdoutPercent) ?? 0
            guard (0...100).contains(holdoutPercent) else {
                throw DecodingError.dataCorruptedError(forKey: .holdoutPercent, in: container, debugDescription: "from 0 to 100")
            }
            policies = try container.decodeIfPresent([Policy].self, forKey: .policies) ?? []
            fallback = try container.decodeIfPresent(RefundDefaultConfig.self, forKey: .default)?.domain
            var ids = Set<String>()
            for policy in policies where !ids.insert(policy.id).inserted {
                throw DecodingError.dataCorruptedError(forKey: .policies, in: container, debugDescription: "policy \(policy.id) is listed twice")
            }
        }

        var domain: RefundPolicies { RefundPolicies(holdoutPercent: holdoutPercent, policies: policies.map(\.domain), fallback: fallback) }
    }

    /// `refunds.default`: both of Apple's required facts, stated by the operator; neither is derived.
    struct RefundDefaultConfig: Decodable {
        var domain: RefundDefault

        enum CodingKeys: String, ConfigKeys { case deliveryStatus, sampleContentProvided }

        init(from decoder: any Decoder) throws {
            let container = try decoder.configContainer(keyedBy: CodingKeys.self)
            let deliveryStatus = try container.decode(String.self, forKey: .deliveryStatus)
            guard ConsumptionRequestBody.deliveryStatuses.contains(deliveryStatus) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .deliveryStatus,
                    in: container,
                    debugDescription: "\(deliveryStatus) is not one of \(ConsumptionRequestBody.deliveryStatuses.joined(separator: ", "))"
                )
            }
            domain = RefundDefault(
                deliveryStatus: deliveryStatus,
                sampleContentProvided: try container.decode(Bool.self, forKey: .sampleContentProvided)
            )
        }
    }

    /// One refund policy: conditions, then the answer.
    public struct Policy: Decodable, Sendable {
        public var id: String
        public var conditions: RefundConditions
        public var refundPreference: String?
        public var deliveryStatus: String
        public var sampleContentProvided: Bool?
        public var consumptionPercentage: Int?

        enum CodingKeys: String, ConfigKeys {
            case id, conditions, refundPreference, deliveryStatus, sampleContentProvided, consumptionPercentage
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.configContainer(keyedBy: CodingKeys.self)
            id = try container.decode(String.self, forKey: .id)
            conditions = try container.decodeIfPresent(Conditions.self, forKey: .conditions)?.domain ?? RefundConditions()
            refundPreference = try container.decodeIfPresent(String.self, forKey: .refundPreference)
            deliveryStatus = try container.decodeIfPresent(String.self, forKey: .deliveryStatus) ?? "DELIVERED"
            sampleContentProvided = try container.decodeIfPresent(Bool.self, forKey: .sampleContentProvided)
            consumptionPercentage = try container.decodeIfPresent(Int.self, forKey: .consumptionPercentage)
            func refuse(_ key: CodingKeys, _ why: String) -> DecodingError {
                DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "policy \(id): \(why)")
            }
            if let refundPreference, !ConsumptionRequestBody.refundPreferences.contains(refundPreference) {
                throw refuse(
                    .refundPreference,
                    "\(refundPreference) is not one of \(ConsumptionRequestBody.refundPreferences.joined(separator: ", "))"
                )
            }
            guard ConsumptionRequestBody.deliveryStatuses.contains(deliveryStatus) else {
                throw refuse(.deliveryStatus, "\(deliveryStatus) is not one of \(ConsumptionRequestBody.deliveryStatuses.joined(separator: ", "))")
            }
            if let consumptionPercentage {
                // Apple: "Minimum: 0 Maximum: 100000", in milliunits.
                guard (0...100_000).contains(consumptionPercentage) else {
                    throw refuse(.consumptionPercentage, "\(consumptionPercentage) milliunits: from 0 to 100000 (100%)")
                }
                // "If the deliveryStatus value isn't DELIVERED, set the consumptionPercentage to 0".
                if deliveryStatus != "DELIVERED" && consumptionPercentage != 0 {
                    throw refuse(.consumptionPercentage, "must be 0 when deliveryStatus is \(deliveryStatus) (Apple refuses it otherwise)")
                }
            }
            // "If you select GRANT_PRORATED … you need to provide a consumptionPercentage greater than 0 and less than
            // 100000"; for an auto-renewable subscription none may be given ("The system calculates the consumption
            // automatically").
            if refundPreference == "GRANT_PRORATED", conditions.productTypes != ["Auto-Renewable Subscription"],
                !(1...99_999).contains(consumptionPercentage ?? 0)
            {
                throw refuse(
                    .consumptionPercentage,
                    "GRANT_PRORATED needs a consumptionPercentage from 1 to 99999 for products other than auto-renewable subscriptions (or conditions.productTypes: [Auto-Renewable Subscription])"
                )
            }
        }

        var domain: RefundPolicy {
            RefundPolicy(
                id: id,
                conditions: conditions,
                refundPreference: refundPreference,
                deliveryStatus: deliveryStatus,
                sampleContentProvided: sampleContentProvided,
                consumptionPercentage: consumptionPercentage
            )
        }
    }

    /// `policies[].conditions`.
    struct Conditions: Decodable {
        var domain: RefundConditions

        enum CodingKeys: String, ConfigKeys {
            case products, productTypes, storefronts, reasons, minimumSincePurchase, maximumSincePurchase, minimumTenure, maximumTenure
            case maxEarlierRefunds, discountRedeemed, billingPlans, billingPeriods
            // Deprecated since 2.1.0: whole days, read as the durations above (one spelling per idea, as campaigns').
            case minDaysSincePurchase, maxDaysSincePurchase, minTenureDays, maxTenureDays
        }

        /// A duration given as the config writes one (`20d`), or in whole days under its deprecated key.
        private static func duration(
            _ key: CodingKeys,
            days legacy: CodingKeys,
            in container: KeyedDecodingContainer<CodingKeys>
        ) throws -> Int64? {
            let given = try container.decodeDurationIfPresent(forKey: key)?.seconds
            let days = try container.decodeIfPresent(Int.self, forKey: legacy)
            if given != nil, days != nil {
                throw DecodingError.dataCorruptedError(
                    forKey: legacy,
                    in: container,
                    debugDescription: "give \(key.stringValue) only (\(legacy.stringValue), in days, is its deprecated spelling)"
                )
            }
            guard let days else { return given }
            // A number from the config: multiplied without trapping, a value no duration holds refused with why.
            let (seconds, overflow) = Int64(days).multipliedReportingOverflow(by: 86_400)
            guard !overflow, days >= 0 else {
                throw DecodingError.dataCorruptedError(forKey: legacy, in: container, debugDescription: "\(days) days is not a duration")
            }
            return seconds
        }

        static let productTypes = ["Auto-Renewable Subscription", "Non-Renewing Subscription", "Consumable", "Non-Consumable"]
        static let reasons = ["UNINTENDED_PURCHASE", "FULFILLMENT_ISSUE", "UNSATISFIED_WITH_PURCHASE", "LEGAL", "OTHER"]

        init(from decoder: any Decoder) throws {
            let container = try decoder.configContainer(keyedBy: CodingKeys.self)
            var conditions = RefundConditions()
            conditions.products = try container.decodeIfPresent([String].self, forKey: .products)
            conditions.productTypes = try container.decodeIfPresent([String].self, forKey: .productTypes)
            conditions.storefronts = try container.decodeIfPresent([String].self, forKey: .storefronts)
            conditions.reasons = try container.decodeIfPresent([String].self, forKey: .reasons)
            conditions.minimumSincePurchase = try Self.duration(.minimumSincePurchase, days: .minDaysSincePurchase, in: container)
            conditions.maximumSincePurchase = try Self.duration(.maximumSincePurchase, days: .maxDaysSincePurchase, in: container)
            conditions.minimumTenure = try Self.duration(.minimumTenure, days: .minTenureDays, in: container)
            conditions.maximumTenure = try Self.duration(.maximumTenure, days: .maxTenureDays, in: container)
            conditions.maxEarlierRefunds = try container.decodeIfPresent(Int.self, forKey: .maxEarlierRefunds)
            conditions.discountRedeemed = try container.decodeIfPresent(Bool.self, forKey: .discountRedeemed)
            conditions.billingPlans = try container.decodeIfPresent([String].self, forKey: .billingPlans)
            let periods = try container.decodeIfPresent([String].self, forKey: .billingPeriods)
            conditions.billingPeriods = try periods?.map { text in
                guard let period = RefundFacts.BillingPeriod(rawValue: text) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .billingPeriods,
                        in: container,
                        debugDescription: "\(text) is not current or past (the refunded period: still running when Apple asked, or over)"
                    )
                }
                return period
            }
            // Apple's billingPlanType values (App Store Server API 1.21).
            for plan in conditions.billingPlans ?? [] where !ReclaimConfig.Campaign.Offer.billingPlans.contains(plan) {
                throw DecodingError.dataCorruptedError(
                    forKey: .billingPlans,
                    in: container,
                    debugDescription: "\(plan) is not one of Apple's billing plans (MONTHLY, BILLED_UPFRONT)"
                )
            }
            for type in conditions.productTypes ?? [] where !Self.productTypes.contains(type) {
                throw DecodingError.dataCorruptedError(
                    forKey: .productTypes,
                    in: container,
                    debugDescription: "\(type) is not one of Apple's types (\(Self.productTypes.joined(separator: ", ")))"
                )
            }
            for reason in conditions.reasons ?? [] where !Self.reasons.contains(reason) {
                throw DecodingError.dataCorruptedError(
                    forKey: .reasons,
                    in: container,
                    debugDescription: "\(reason) is not one of Apple's consumptionRequestReason values (\(Self.reasons.joined(separator: ", ")))"
                )
            }
            domain = conditions
        }
    }
}
