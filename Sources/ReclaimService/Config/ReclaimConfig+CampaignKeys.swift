// The keys of a `campaigns[]` entry.
import Foundation
import ReclaimDomain

extension ReclaimConfig {
    /// A win-back or retention campaign (see ``ReclaimDomain/Campaign`` for the meaning of each key).
    public struct Campaign: Decodable, Sendable {
        public var id: String
        /// Bundle id of the app.
        public var app: String
        /// `TYPE` or `TYPE/SUBTYPE` of the notification that makes the subscriber eligible.
        public var trigger: String
        /// The offer; nil when the campaign lists `variants` instead.
        public var offer: Offer?
        /// An experiment: the offers to compare, each given to a share of new subscribers by its weight.
        public var variants: [Variant]?
        /// Who qualifies; every key is optional and every key given must hold (decoded by ``ConfigConditions``).
        public var conditions: CampaignConditions
        public var deliverableFor: ConfigDuration
        public var cooldown: ConfigDuration
        /// Fire this long after the trigger, re-checked then (0s: at once).
        public var delay: ConfigDuration
        /// How long after the trigger a delayed campaign may still fire; nil: delay plus one day.
        public var window: ConfigDuration?
        /// Most offers of this campaign per subscriber; nil for no limit.
        public var maxOffersPerSubscriber: Int?
        public var holdoutPercent: Int
        public var priority: Int
        /// ISO 8601 date or date-time (UTC when no zone is given); nil for no bound.
        public var startsAt: String?
        public var endsAt: String?
        /// Skip subscribers Apple already lists win-back offers for (default true).
        public var standAsideForWinBack: Bool
        /// Retention Messaging: the approved message Apple shows with this campaign's offer; without one the
        /// offer is not offered in Apple's cancellation sheet. For a cancel-sheet campaign, the message of its
        /// `switchTo` or `offer` answer.
        public var messageIdentifier: String?
        /// Cancel sheet (trigger RETENTION_MESSAGING): answer with this approved message. Cancel flow (trigger
        /// CANCEL_FLOW): answer with this message key, which the app words itself.
        public var message: String?
        /// Cancel sheet: answer with a switch-plan message (Apple's `alternateProduct`) to this product. Cancel flow:
        /// suggest switching to this product.
        public var switchTo: SwitchTo?
        /// Cancel sheet: `v2` (default) or `v1`, the signature format of its promotional-offer answers.
        public var offerSignature: String?
        /// Cancel sheet: record what it would answer, and answer `{}`.
        public var shadow: Bool
        /// Cancel sheet: a decision's save outcome is settled this long after it (default 30d).
        public var saveWindow: ConfigDuration
        /// A trigger that arrives while a 12-month commitment runs and will not renew is decided this long before the
        /// commitment ends (default 14d).
        public var commitmentLead: ConfigDuration
        /// Cancel flow (trigger CANCEL_FLOW): the survey answers it takes (`none` for no answer); nil for every one.
        public var reasons: [String]?

        /// The plan a switch-plan answer suggests.
        public struct SwitchTo: Decodable, Sendable {
            public var productId: String
            /// `BILLED_UPFRONT` or `MONTHLY` (Retention Messaging 1.5); nil to leave it out.
            public var billingPlanType: String?

            enum CodingKeys: String, ConfigKeys { case productId, billingPlanType }

            public init(from decoder: any Decoder) throws {
                let container = try decoder.configContainer(keyedBy: CodingKeys.self)
                productId = try container.decode(String.self, forKey: .productId)
                billingPlanType = try container.decodeIfPresent(String.self, forKey: .billingPlanType)
            }
        }

        /// The offer: `offerIdentifier` for any plan, `offerIdentifiers` per billing plan (``ReclaimDomain/CampaignVariant/offerIdentifiersByPlan``);
        /// at least one of the two.
        public struct Offer: Decodable, Sendable {
            /// The product; for `offerCodes`, optional (the pool names its product) and, when given, checked against
            /// the pool by `reclaim campaigns check`.
            public var productId: String
            public var offerIdentifier: String?
            /// By Apple's `billingPlanType`: `{MONTHLY: …, BILLED_UPFRONT: …}`.
            public var offerIdentifiers: [String: String]?
            /// One-time-use offer codes instead of a signed promotional offer: the reference name of the offer-code
            /// offer whose pool (`reclaim codes import`) each offered decision takes a code from.
            public var offerCodes: String?

            enum CodingKeys: String, ConfigKeys { case productId, offerIdentifier, offerIdentifiers, offerCodes }

            public init(from decoder: any Decoder) throws {
                let container = try decoder.configContainer(keyedBy: CodingKeys.self)
                offerCodes = try container.decodeIfPresent(String.self, forKey: .offerCodes)
                productId =
                    offerCodes == nil
                    ? try container.decode(String.self, forKey: .productId)
                    : try container.decodeIfPresent(String.self, forKey: .productId) ?? ""
                offerIdentifier = try container.decodeIfPresent(String.self, forKey: .offerIdentifier)
                offerIdentifiers = try container.decodeIfPresent([String: String].self, forKey: .offerIdentifiers)
            }
        }

        /// One arm of an experiment: an offer, or for a cancel-sheet campaign one of `message`, `switchTo` (with
        /// `messageIdentifier`) or `offer` (with `messageIdentifier`).
        public struct Variant: Decodable, Sendable {
            public var id: String
            public var offer: Offer?
            public var message: String?
            public var switchTo: SwitchTo?
            public var messageIdentifier: String?
            /// Relative share of new subscribers (default 1).
            public var weight: Int

            enum CodingKeys: String, ConfigKeys { case id, offer, message, switchTo, messageIdentifier, weight }

            public init(from decoder: any Decoder) throws {
                let container = try decoder.configContainer(keyedBy: CodingKeys.self)
                id = try container.decode(String.self, forKey: .id)
                offer = try container.decodeIfPresent(Offer.self, forKey: .offer)
                message = try container.decodeIfPresent(String.self, forKey: .message)
                switchTo = try container.decodeIfPresent(SwitchTo.self, forKey: .switchTo)
                messageIdentifier = try container.decodeIfPresent(String.self, forKey: .messageIdentifier)
                weight = try container.decodeIfPresent(Int.self, forKey: .weight) ?? 1
            }
        }

        enum CodingKeys: String, ConfigKeys {
            case id, app, trigger, offer, variants, conditions, deliverableFor, cooldown, maxOffersPerSubscriber, holdoutPercent, priority
            case startsAt, endsAt, standAsideForWinBack, messageIdentifier, delay, window, message, switchTo, offerSignature, shadow
            case saveWindow, commitmentLead, reasons
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.configContainer(keyedBy: CodingKeys.self)
            id = try container.decode(String.self, forKey: .id)
            app = try container.decode(String.self, forKey: .app)
            trigger = try container.decode(String.self, forKey: .trigger)
            offer = try container.decodeIfPresent(Offer.self, forKey: .offer)
            variants = try container.decodeIfPresent([Variant].self, forKey: .variants)
            conditions = try container.decodeIfPresent(ConfigConditions.self, forKey: .conditions)?.domain ?? CampaignConditions()
            deliverableFor = try container.decodeDurationIfPresent(forKey: .deliverableFor) ?? ConfigDuration(seconds: 7 * 86_400)
            cooldown = try container.decodeDurationIfPresent(forKey: .cooldown) ?? ConfigDuration(seconds: 90 * 86_400)
            delay = try container.decodeDurationIfPresent(forKey: .delay) ?? ConfigDuration(seconds: 0)
            window = try container.decodeDurationIfPresent(forKey: .window)
            maxOffersPerSubscriber = try container.decodeIfPresent(Int.self, forKey: .maxOffersPerSubscriber)
            holdoutPercent = try container.decodeIfPresent(Int.self, forKey: .holdoutPercent) ?? 0
            priority = try container.decodeIfPresent(Int.self, forKey: .priority) ?? 0
            startsAt = try container.decodeIfPresent(String.self, forKey: .startsAt)
            endsAt = try container.decodeIfPresent(String.self, forKey: .endsAt)
            standAsideForWinBack = try container.decodeIfPresent(Bool.self, forKey: .standAsideForWinBack) ?? true
            messageIdentifier = try container.decodeIfPresent(String.self, forKey: .messageIdentifier)
            message = try container.decodeIfPresent(String.self, forKey: .message)
            switchTo = try container.decodeIfPresent(SwitchTo.self, forKey: .switchTo)
            offerSignature = try container.decodeIfPresent(String.self, forKey: .offerSignature)
            shadow = try container.decodeIfPresent(Bool.self, forKey: .shadow) ?? false
            saveWindow = try container.decodeDurationIfPresent(forKey: .saveWindow) ?? ConfigDuration(seconds: 30 * 86_400)
            commitmentLead =
                try container.decodeDurationIfPresent(forKey: .commitmentLead)
                ?? ConfigDuration(seconds: Int64(NotificationCampaign.defaultCommitmentLead))
            reasons = try container.decodeIfPresent([String].self, forKey: .reasons)
        }
    }
}

extension ReclaimConfig.Campaign {
    /// `campaigns[].conditions` as the config writes them (durations such as `180d`), decoded into the domain's
    /// ``CampaignConditions``: the keys are the domain's, and no field is declared twice.
    struct ConfigConditions: Decodable {
        var domain: CampaignConditions

        enum CodingKeys: String, ConfigKeys {
            case products, minimumTenure, expirationIntents, storefronts, lapsedWithin, billingPlans, expiresWithin
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.configContainer(keyedBy: CodingKeys.self)
            domain = CampaignConditions(
                products: try container.decodeIfPresent([String].self, forKey: .products),
                minimumTenure: try container.decodeDurationIfPresent(forKey: .minimumTenure)?.seconds,
                expirationIntents: try container.decodeIfPresent([Int].self, forKey: .expirationIntents),
                storefronts: try container.decodeIfPresent([String].self, forKey: .storefronts),
                lapsedWithin: try container.decodeDurationIfPresent(forKey: .lapsedWithin)?.seconds,
                billingPlans: try container.decodeIfPresent([String].self, forKey: .billingPlans),
                expiresWithin: try container.decodeDurationIfPresent(forKey: .expiresWithin)?.seconds
            )
        }
    }
}
