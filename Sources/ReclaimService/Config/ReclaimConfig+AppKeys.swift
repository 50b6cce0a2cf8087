// The keys of an `apps[]` entry: the app, its signing keys and its App Store Server API key.
import Foundation
import ReclaimDomain

extension ReclaimConfig {
    /// One App Store app that Reclaim serves.
    public struct App: Decodable, Sendable {
        public var bundleId: String
        /// Apple's numeric app id; required when Production is accepted (Production payloads must carry it).
        public var appAppleId: Int64?
        /// Environments whose notifications are accepted: Production, Sandbox (Xcode, LocalTesting for development).
        public var environments: [String]
        /// App Store Connect issuer id, needed for StoreKit 2 offer JWS.
        public var issuerId: String?
        /// Subscription keys (.p8) by key id; the first one signs new offers, the others remain known for rotation.
        public var signingKeys: [SigningKeyFile]
        /// Extra trusted root certificates (PEM files) for signed payloads; Apple Root CA - G3 is always trusted.
        public var rootCertificates: [String]
        /// Retention Messaging: the approved message Apple shows when no offer applies; nil answers nothing.
        public var defaultMessageIdentifier: String?
        /// A file holding the secret (32 bytes or more) the app's backend signs user tokens with; when set,
        /// `GET /v1/offers` requires a valid `X-Reclaim-User-Token` for the appAccountToken asked about.
        public var userTokenSecretFile: String?
        /// During a rotation of that secret: the file of the old one, whose tokens stay valid until it is removed.
        public var previousUserTokenSecretFile: String?
        /// The App Store Server API (an In-App Purchase key): reconciliation, backfill and test notifications.
        public var serverAPI: ServerAPI?
        /// Other receivers of the app's notifications, each sent every stored notification byte for byte.
        public var forwarding: [ForwardingTarget] = []
        /// Receivers of Reclaim's own events (offers, grants), signed as Standard Webhooks.
        public var webhooks: [Webhook] = []
        /// At most `redemptions` discounted offers per subscriber in a rolling `window`, across every door; nil for none.
        public var discountBudget: DiscountBudgetKeys?
        /// The in-app cancel flow's survey answers (``ReclaimConfig/App/defaultCancelReasons`` when not given):
        /// what `POST /v1/cancel-flow` accepts as `reason`; `refund` among them.
        public var cancelReasons: [String]
        /// Answers to Apple's refund requests (CONSUMPTION_REQUEST); nil answers none.
        public var refunds: Refunds?
        /// The Retention Messaging set-up Apple should hold (`reclaim messaging apply`); nil: set up by hand.
        public var retentionMessaging: RetentionMessaging?
        /// Set App Account Token where Reclaim knows whose a purchase is and Apple's transaction does not say
        /// (``AppAccountTokenRepair``): off (default), fill, or correct.
        public var setAppAccountToken: AppAccountTokenRepair.Mode = .off

        enum CodingKeys: String, ConfigKeys {
            case bundleId, appAppleId, environments, issuerId, signingKeys, rootCertificates, defaultMessageIdentifier, userTokenSecretFile
            case previousUserTokenSecretFile, serverAPI, forwarding, webhooks, discountBudget, refunds, retentionMessaging
            case setAppAccountToken, cancelReasons
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.configContainer(keyedBy: CodingKeys.self)
            bundleId = try container.decode(String.self, forKey: .bundleId)
            appAppleId = try container.decodeIfPresent(Int64.self, forKey: .appAppleId)
            environments = try container.decodeIfPresent([String].self, forKey: .environments) ?? ["Production", "Sandbox"]
            issuerId = try container.decodeIfPresent(String.self, forKey: .issuerId)
            signingKeys = try container.decodeIfPresent([SigningKeyFile].self, forKey: .signingKeys) ?? []
            rootCertificates = try container.decodeIfPresent([String].self, forKey: .rootCertificates) ?? []
            defaultMessageIdentifier = try container.decodeIfPresent(String.self, forKey: .defaultMessageIdentifier)
            userTokenSecretFile = try container.decodeIfPresent(String.self, forKey: .userTokenSecretFile)
            previousUserTokenSecretFile = try container.decodeIfPresent(String.self, forKey: .previousUserTokenSecretFile)
            serverAPI = try container.decodeIfPresent(ServerAPI.self, forKey: .serverAPI)
            forwarding = try container.decodeIfPresent([ForwardingTarget].self, forKey: .forwarding) ?? []
            webhooks = try container.decodeIfPresent([Webhook].self, forKey: .webhooks) ?? []
            discountBudget = try container.decodeIfPresent(DiscountBudgetKeys.self, forKey: .discountBudget)
            cancelReasons = try container.decodeIfPresent([String].self, forKey: .cancelReasons) ?? Self.defaultCancelReasons
            refunds = try container.decodeIfPresent(Refunds.self, forKey: .refunds)
            retentionMessaging = try container.decodeIfPresent(RetentionMessaging.self, forKey: .retentionMessaging)
            if let mode = try container.decodeIfPresent(String.self, forKey: .setAppAccountToken) {
                guard let parsed = AppAccountTokenRepair.Mode(rawValue: mode) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .setAppAccountToken,
                        in: container,
                        debugDescription:
                            "\(mode): off (never), fill (where Apple's transaction has no token) or correct (also replace one the app's user proved wrong)"
                    )
                }
                setAppAccountToken = parsed
            }
            if var api = serverAPI {
                try api.resolve(signingKeys: signingKeys, appIssuerId: issuerId, container: container)
                serverAPI = api
            }
        }
    }

    /// `apps[].discountBudget`: `redemptions` and `window` required; `byPlan` gives a billing plan its own budget.
    public struct DiscountBudgetKeys: Decodable, Sendable {
        public var redemptions: Int
        public var window: ConfigDuration
        /// By Apple's `billingPlanType` (MONTHLY, BILLED_UPFRONT): that plan's budget, with the same two keys.
        public var byPlan: [String: DiscountBudgetKeys]?

        enum CodingKeys: String, ConfigKeys { case redemptions, window, byPlan }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.configContainer(keyedBy: CodingKeys.self)
            redemptions = try container.decode(Int.self, forKey: .redemptions)
            guard let window = try container.decodeDurationIfPresent(forKey: .window) else {
                throw DecodingError.keyNotFound(CodingKeys.window, .init(codingPath: container.codingPath, debugDescription: "window is required"))
            }
            self.window = window
            byPlan = try container.decodeIfPresent([String: DiscountBudgetKeys].self, forKey: .byPlan)
        }

        var domain: DiscountBudget {
            DiscountBudget(
                redemptions: redemptions,
                window: TimeInterval(window.seconds),
                byPlan: (byPlan ?? [:]).reduce(into: [:]) { budgets, entry in
                    budgets[entry.key] = DiscountBudget(
                        redemptions: entry.value.redemptions,
                        window: TimeInterval(entry.value.window.seconds),
                        plan: entry.key
                    )
                }
            )
        }

        /// Its problems, and each plan's (``ReclaimConfig/validate(source:)``).
        func problems(app: String) -> [String] {
            var problems: [String] = []
            for (key, budget) in [("discountBudget", self)]
                + (byPlan ?? [:]).sorted(by: { $0.key < $1.key }).map({ ("discountBudget.byPlan.\($0.key)", $0.value) })
            {
                if !(1...1000).contains(budget.redemptions) {
                    problems.append("app \(app): \(key).redemptions must be from 1 to 1000, got \(budget.redemptions)")
                }
                if budget.window.seconds < 86_400 { problems.append("app \(app): \(key).window must be at least 1d") }
                if budget.byPlan != nil, key != "discountBudget" {
                    problems.append("app \(app): \(key).byPlan: a plan's budget has no plans of its own")
                }
            }
            for plan in (byPlan ?? [:]).keys.sorted() where !Campaign.Offer.billingPlans.contains(plan) {
                problems.append("app \(app): discountBudget.byPlan: \(plan) is not one of Apple's billing plans (MONTHLY, BILLED_UPFRONT)")
            }
            return problems
        }
    }

    /// An App Store Connect In-App Purchase key for the App Store Server API.
    ///
    /// The same kind of key signs offers: Apple generates one In-App Purchase key (a `.p8`) for both, so
    /// `signingKey: KEYID` may name one of the app's `signingKeys` instead of repeating its id and file, and
    /// `issuerId` defaults to the app's.
    public struct ServerAPI: Decodable, Sendable {
        /// The key's id (App Store Connect, Users and Access, Integrations, In-App Purchase).
        public var keyId: String
        /// The team's issuer id (same page); the app's `issuerId` when not given.
        public var issuerId: String
        /// The key's `.p8` file.
        public var file: String
        /// Overrides Apple's URL for every environment (a proxy, or a test's stand-in); nil: Apple's URL for each.
        public var baseURL: String?
        /// The keyId of one of the app's `signingKeys` to use here too; nil when `keyId` and `file` are given.
        public var signingKey: String?
        /// Lower rates than Apple's for some endpoints, in Production requests per second, by endpoint identifier
        /// (``AppleEndpoint``): a share of the budget kept for another system that calls Apple with the same app.
        /// Sandbox gets the lower of this and Apple's sandbox limit.
        public var requestsPerSecond: [String: Double] = [:]

        public init(keyId: String, issuerId: String, file: String, baseURL: String? = nil) {
            self.keyId = keyId
            self.issuerId = issuerId
            self.file = file
            self.baseURL = baseURL
        }

        enum CodingKeys: String, ConfigKeys { case keyId, issuerId, file, baseURL, signingKey, requestsPerSecond }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.configContainer(keyedBy: CodingKeys.self)
            signingKey = try container.decodeIfPresent(String.self, forKey: .signingKey)
            requestsPerSecond = try container.decodeIfPresent([String: Double].self, forKey: .requestsPerSecond) ?? [:]
            for (id, rate) in requestsPerSecond.sorted(by: { $0.key < $1.key }) {
                guard let endpoint = AppleEndpoint(rawValue: id) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .requestsPerSecond,
                        in: container,
                        debugDescription: "\(id) is not an endpoint Reclaim calls (\(AppleEndpoint.allCases.map(\.rawValue).joined(separator: ", ")))"
                    )
                }
                // At least one request in 100 s: the pacer's interval, in nanoseconds, must fit an Int64.
                guard rate >= 0.01, rate <= endpoint.productionRate else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .requestsPerSecond,
                        in: container,
                        debugDescription:
                            "\(id): \(rate) requests a second; give at least 0.01 and at most Apple's limit, \(Int(endpoint.productionRate)) (a higher rate only meets 429s)"
                    )
                }
            }
            baseURL = try container.decodeIfPresent(String.self, forKey: .baseURL)
            issuerId = try container.decodeIfPresent(String.self, forKey: .issuerId) ?? ""
            if signingKey == nil {
                keyId = try container.decode(String.self, forKey: .keyId)
                file = try container.decode(String.self, forKey: .file)
            } else {
                for key in [CodingKeys.keyId, .file] where container.contains(key) {
                    throw DecodingError.dataCorruptedError(
                        forKey: key,
                        in: container,
                        debugDescription: "give either signingKey or keyId and file, not both: signingKey names the key and its file"
                    )
                }
                keyId = ""
                file = ""
            }
        }

        /// The rate Reclaim keeps to for `endpoint` in `environment`: Apple's limit, or the lower one configured.
        public func rate(_ endpoint: AppleEndpoint, in environment: String) -> Double {
            min(endpoint.appleRate(in: environment), requestsPerSecond[endpoint.rawValue] ?? .infinity)
        }

        /// Fills in what `signingKey` names and the app's issuer id; errors name the app's `serverAPI`.
        mutating func resolve(
            signingKeys: [SigningKeyFile],
            appIssuerId: String?,
            container: KeyedDecodingContainer<App.CodingKeys>
        ) throws {
            if let signingKey {
                guard let key = signingKeys.first(where: { $0.keyId == signingKey }) else {
                    let known = signingKeys.map(\.keyId).joined(separator: ", ")
                    throw DecodingError.dataCorruptedError(
                        forKey: .serverAPI,
                        in: container,
                        debugDescription: "signingKey \(signingKey) is not one of the app's signingKeys (\(known.isEmpty ? "none" : known))"
                    )
                }
                keyId = key.keyId
                file = key.file
            }
            if issuerId.isEmpty {
                guard let appIssuerId, !appIssuerId.isEmpty else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .serverAPI,
                        in: container,
                        debugDescription:
                            "issuerId is missing: give it here or as the app's issuerId (App Store Connect, Users and Access, Integrations)"
                    )
                }
                issuerId = appIssuerId
            }
        }
    }

    public struct SigningKeyFile: Decodable, Sendable {
        public var keyId: String
        public var file: String
        /// The key is Xcode's "Subscription Offers Key" of a StoreKit configuration file (trying purchases in the
        /// Simulator, docs/ios.md), not App Store Connect's: its key id has another format.
        public var xcode: Bool

        public init(keyId: String, file: String, xcode: Bool = false) {
            self.keyId = keyId
            self.file = file
            self.xcode = xcode
        }

        enum CodingKeys: String, ConfigKeys { case keyId, file, xcode }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.configContainer(keyedBy: CodingKeys.self)
            keyId = try container.decode(String.self, forKey: .keyId)
            file = try container.decode(String.self, forKey: .file)
            xcode = try container.decodeIfPresent(Bool.self, forKey: .xcode) ?? false
        }
    }
}

extension ReclaimConfig.App {
    /// `cancelReasons` when the app gives none.
    public static let defaultCancelReasons = ["too_expensive", "not_using", "missing_features", "technical_issues", "switching", "refund", "other"]

    /// The survey answer that leads to Apple's refund request sheet instead of the manage-subscriptions sheet.
    public static let refundReason = "refund"

    /// The problems of `cancelReasons`: each a short identifier, none twice, `refund` among them (the flow's way to
    /// Apple's refund request sheet), `none` not (it is "no answer").
    func cancelReasonProblems() -> [String] {
        var problems: [String] = []
        var seen = Set<String>()
        for reason in cancelReasons {
            if reason.wholeMatch(of: /[a-z0-9_-]{1,40}/) == nil {
                problems.append("app \(bundleId): cancelReasons: '\(reason)' is not 1 to 40 of a-z, 0-9, _ and -")
            }
            if !seen.insert(reason).inserted { problems.append("app \(bundleId): cancelReasons: \(reason) is listed twice") }
        }
        if !seen.contains(Self.refundReason) {
            problems.append("app \(bundleId): cancelReasons: must include refund: the survey answer that opens Apple's refund request sheet")
        }
        if seen.contains(CancelFlowCampaign.noAnswer) {
            problems.append("app \(bundleId): cancelReasons: none is the subscriber's \"no answer\": leave it out")
        }
        return problems
    }
}
