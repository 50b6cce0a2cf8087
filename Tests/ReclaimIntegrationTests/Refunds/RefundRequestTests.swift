import Foundation
import Hummingbird
import HummingbirdTesting
import PostgresNIO
import ReclaimDomain
import ReclaimStore
import ReclaimTestSupport
import Synchronization
import Testing

@testable import ReclaimService

/// Issue 50: Apple's refund requests answered through Send Consumption Information, by policy, against
/// ``AppleAPIStandIn`` checking each body as Apple's documentation states it, and Apple's own Python model.
@Suite("Refund requests: CONSUMPTION_REQUEST answered by policy, once, and each outcome counted", .poolWatchdog)
struct RefundRequestTests {
    let logger = TestPostgres.logger
    typealias Setup = RecoveryTests.Setup

    static func config(_ setup: Setup, port: Int, refunds: String) throws -> ReclaimConfig {
        let api =
            "{keyId: APIKEY0001, issuerId: 99999999-2222-3333-4444-555555555555, file: \(setup.directory.path)/api.p8, baseURL: \"http://127.0.0.1:\(port)\"}"
        return try ReclaimConfig.parse(
            yaml: """
                apps:
                  - bundleId: com.example.app
                    appAppleId: 1234567890
                    environments: [Sandbox]
                    rootCertificates: [\(setup.directory.path)/root.pem]
                    serverAPI: \(api)
                    refunds: \(refunds)
                  - bundleId: com.example.other
                    appAppleId: 1234567890
                    environments: [Sandbox]
                    rootCertificates: [\(setup.directory.path)/root.pem]
                    serverAPI: \(api)
                """
        )
    }

    /// A notification of `type` for transaction `id` (an auto-renewable subscription bought 30 days ago).
    static func notification(
        _ setup: Setup,
        type: String,
        id: String,
        bundleId: String = "com.example.app",
        uuid: UUID = UUID(),
        data: [String: Any] = [:],
        transaction: [String: Any] = [:]
    ) throws -> Data {
        var notifications = setup.notifications
        notifications.bundleId = bundleId
        let purchased = Int64(Date().addingTimeInterval(-30 * 86_400).timeIntervalSince1970 * 1000)
        return try notifications.body(
            uuid: uuid,
            type: type,
            subtype: nil,
            originalTransactionId: id,
            transactionFields: ["purchaseDate": purchased, "originalPurchaseDate": purchased, "storefront": "USA"].merging(transaction) { $1 },
            dataFields: data
        )
    }

    @Test(
        "a redelivered request answered once, a 429 then success, an app without refunds silent; every body Apple's model; REFUND and REFUND_DECLINED counted in the report"
    )
    func answeredOnce() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        // Request 1 (the first answer) meets Apple's rate limit.
        let standIn = setup.standIn(failures: [1: .rateLimited(retryAfter: .milliseconds(700))])
        let app = Application(router: standIn.router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { http in
            let port = try #require(http.port)
            try await withTestDatabase { client, _ in
                let config = try Self.config(
                    setup,
                    port: port,
                    refunds: "{consent: terms, holdoutPercent: 0, policies: [{id: decline-all, refundPreference: DECLINE}]}"
                )
                let dependencies = try Dependencies.test(postgres: client, config: config)
                let first = UUID()
                let bodies = [
                    try Self.notification(
                        setup,
                        type: "CONSUMPTION_REQUEST",
                        id: "8000000000000001",
                        uuid: first,
                        data: ["consumptionRequestReason": "UNINTENDED_PURCHASE"]
                    ),
                    try Self.notification(
                        setup,
                        type: "CONSUMPTION_REQUEST",
                        id: "8000000000000001",
                        uuid: first,
                        data: ["consumptionRequestReason": "UNINTENDED_PURCHASE"]
                    ),
                    try Self.notification(setup, type: "CONSUMPTION_REQUEST", id: "8000000000000002", data: ["consumptionRequestReason": "OTHER"]),
                    try Self.notification(setup, type: "CONSUMPTION_REQUEST", id: "8000000000000003", bundleId: "com.example.other"),
                ]
                try await processNotifications(bodies, client: client, dependencies: dependencies)
                let answers = try standIn.consumptionAnswers.withLock { $0 }.map {
                    (
                        transactionId: $0.transactionId,
                        body: try #require(try JSONSerialization.jsonObject(with: Data($0.body.utf8)) as? [String: Any])
                    )
                }
                #expect(answers.map(\.transactionId).sorted() == ["8000000000000001", "8000000000000002"], "\(answers.map(\.transactionId))")
                let puts = standIn.received.filter { $0.path.hasPrefix("/inApps/v2/transactions/consumption/") }
                #expect(puts.count == 3, "two answers and the one refused with 429: \(puts.map(\.path))")
                #expect(puts.filter(\.limited).isEmpty)
                for answer in answers {
                    #expect(answer.body["customerConsented"] as? Bool == true)
                    #expect(answer.body["deliveryStatus"] as? String == "DELIVERED")
                    #expect(answer.body["refundPreference"] as? String == "DECLINE")
                    #expect(answer.body["sampleContentProvided"] as? Bool == false)
                    #expect(answer.body["consumptionPercentage"] == nil, "never for an auto-renewable subscription")
                }
                // Apple's own model reads each body back unchanged.
                let checked = try await Self.checkWithApplesModel(answers.map(\.body))
                #expect(checked == 2)
                // Apple's decisions.
                try await processNotifications(
                    [
                        try Self.notification(
                            setup,
                            type: "REFUND",
                            id: "8000000000000001",
                            transaction: ["revocationType": "REFUND_FULL", "revocationReason": 0]
                        ),
                        try Self.notification(setup, type: "REFUND_DECLINED", id: "8000000000000002"),
                    ],
                    client: client,
                    dependencies: dependencies
                )
                let rows = try await client.withConnection(logger: logger) {
                    try await RefundRequestStore.rates(environment: "Sandbox", connection: $0, logger: logger)
                }
                #expect(rows.count == 1)
                let row = try #require(rows.first)
                #expect(row.policy == "decline-all" && row.requests == 2 && row.answered == 2 && row.refunded == 1 && row.declined == 1, "\(row)")
                #expect(row.refundRate == 0.5)
                let revoked = try await client.query(
                    "SELECT revocation_type FROM reclaim.refund_requests WHERE outcome = 'refunded'",
                    logger: logger
                )
                for try await type in revoked.decode(String?.self) { #expect(type == "REFUND_FULL") }
            }
        }
    }

    @Test(
        "a 12-month commitment's current month and a past month answered by their own policies (billingPlans, billingPeriods), the plan and period recorded on each request"
    )
    func commitmentPeriods() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let standIn = setup.standIn(failures: [:])
        let app = Application(router: standIn.router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { http in
            let port = try #require(http.port)
            try await withTestDatabase { client, _ in
                let config = try Self.config(
                    setup,
                    port: port,
                    refunds: """
                        {consent: terms, holdoutPercent: 0, default: {deliveryStatus: DELIVERED, sampleContentProvided: false}, policies: [
                          {id: keep-commitment, conditions: {billingPlans: [MONTHLY], billingPeriods: [current]}, refundPreference: DECLINE},
                          {id: past-month, conditions: {billingPlans: [MONTHLY], billingPeriods: [past]}, refundPreference: GRANT_FULL}]}
                        """
                )
                let dependencies = try Dependencies.test(postgres: client, config: config)
                let millis = { (days: Double) in Int64(Date().addingTimeInterval(days * 86_400).timeIntervalSince1970 * 1000) }
                let commitment: [String: Any] = [
                    "billingPlanType": "MONTHLY",
                    "commitmentInfo": [
                        "billingPeriodNumber": 5, "totalBillingPeriods": 12, "commitmentExpiresDate": millis(220), "commitmentPrice": 119_880,
                    ],
                ]
                try await processNotifications(
                    [
                        // This month's payment: its period runs until 20 days from now.
                        try Self.notification(
                            setup,
                            type: "CONSUMPTION_REQUEST",
                            id: "8000000000000501",
                            data: ["consumptionRequestReason": "UNSATISFIED_WITH_PURCHASE"],
                            transaction: commitment.merging(["purchaseDate": millis(-10), "expiresDate": millis(20)]) { $1 }
                        ),
                        // Month 2's payment, over since 70 days.
                        try Self.notification(
                            setup,
                            type: "CONSUMPTION_REQUEST",
                            id: "8000000000000502",
                            data: ["consumptionRequestReason": "UNSATISFIED_WITH_PURCHASE"],
                            transaction: commitment.merging(["purchaseDate": millis(-100), "expiresDate": millis(-70)]) { $1 }
                        ),
                        // A plan billed up front: neither policy.
                        try Self.notification(
                            setup,
                            type: "CONSUMPTION_REQUEST",
                            id: "8000000000000503",
                            data: ["consumptionRequestReason": "UNSATISFIED_WITH_PURCHASE"],
                            transaction: ["billingPlanType": "BILLED_UPFRONT", "expiresDate": millis(300)]
                        ),
                    ],
                    client: client,
                    dependencies: dependencies
                )
                var recorded: [String] = []
                for try await (id, policy, plan, period, preference) in try await client.query(
                    """
                    SELECT transaction_id, coalesce(policy_id, '-'), coalesce(billing_plan_type, '-'), coalesce(billing_period, '-'),
                           coalesce(body->>'refundPreference', '-')
                    FROM reclaim.refund_requests ORDER BY transaction_id
                    """,
                    logger: logger
                ).decode((String, String, String, String, String).self) {
                    recorded.append("\(id) \(policy) \(plan) \(period) \(preference)")
                }
                #expect(
                    recorded == [
                        "8000000000000501 keep-commitment MONTHLY current DECLINE",
                        "8000000000000502 past-month MONTHLY past GRANT_FULL",
                        "8000000000000503 - BILLED_UPFRONT current -",
                    ]
                )
            }
        }
    }

    @Test("the report's refund rates and differences from the holdout equal statsmodels' Wilson and Newcombe intervals")
    func statistics() async throws {
        let script = """
            from statsmodels.stats.proportion import proportion_confint, confint_proportions_2indep
            for x1, n1, x2, n2 in [(3, 12, 6, 10)]:
                w = proportion_confint(x1, n1, alpha=0.05, method="wilson")
                d = confint_proportions_2indep(x1, n1, x2, n2, method="newcomb", compare="diff", alpha=0.05)
                print(repr(float(w[0])), repr(float(w[1])), repr(float(d[0])), repr(float(d[1])))
            """
        let result = try await runProcess("/usr/bin/env", ["python3", "-c", script])
        try #require(result.status == 0, "statsmodels: \(result.errors)")
        let expected = try #require(result.output.split(separator: "\n").first?.split(separator: " ").compactMap { Double($0) })
        try await withTestDatabase { client, _ in
            // decline-all: 3 refunded, 9 declined, 2 undecided; its held-out counterparts: 6 refunded, 4 declined. Other
            // held-out requests (another policy's counterparts: 0 of 10 refunded) are not compared with it.
            var rows: [(arm: String, policy: String?, counterpart: String?, outcome: String?)] = []
            rows += Array(repeating: ("policy", "decline-all", nil, "refunded"), count: 3)
            rows += Array(repeating: ("policy", "decline-all", nil, "declined"), count: 9)
            rows += Array(repeating: ("policy", "decline-all", nil, nil), count: 2)
            rows += Array(repeating: ("holdout", nil, "decline-all", "refunded"), count: 6)
            rows += Array(repeating: ("holdout", nil, "decline-all", "declined"), count: 4)
            rows += Array(repeating: ("holdout", nil, "grant-accidental", "declined"), count: 10)
            for (index, row) in rows.enumerated() {
                try await client.query(
                    """
                    INSERT INTO reclaim.refund_requests (notification_uuid, bundle_id, environment, original_transaction_id, transaction_id,
                        requested_at, arm, policy_id, counterpart_policy, body, status, outcome)
                    VALUES (\(UUID()), 'com.example.app', 'Production', \("\(index)"), \("\(index)"), now(), \(row.arm), \(row.policy),
                        \(row.counterpart), '{}'::jsonb, 'sent', \(row.outcome))
                    """,
                    logger: logger
                )
            }
            let rates = try await client.withConnection(logger: logger) {
                try await RefundRequestStore.rates(environment: "Production", connection: $0, logger: logger)
            }
            let policy = try #require(rates.first { $0.policy == "decline-all" })
            #expect(policy.requests == 14 && policy.refunded == 3 && policy.declined == 9)
            #expect(
                abs((policy.refundRateLower ?? 9) - expected[0]) < 1e-9 && abs((policy.refundRateUpper ?? 9) - expected[1]) < 1e-9,
                "\(policy) \(expected)"
            )
            #expect(abs((policy.difference ?? 9) - (3.0 / 12 - 6.0 / 10)) < 1e-12)
            #expect(
                abs((policy.differenceLower ?? 9) - expected[2]) < 1e-9 && abs((policy.differenceUpper ?? 9) - expected[3]) < 1e-9,
                "\(policy) \(expected)"
            )
            #expect(policy.holdoutRefunded == 6 && policy.holdoutDeclined == 4)
            let holdout = try #require(rates.first { $0.policy == "(holdout)" })
            #expect(holdout.refundRate == 0.3 && holdout.difference == nil)
        }
    }

    @Test("policies in order, the holdout without a preference, GRANT_PRORATED's percentage only where Apple takes it")
    func policies() {
        let now = Date()
        var facts = RefundFacts(
            productId: "com.example.coins",
            productType: "Consumable",
            storefront: "USA",
            reason: "UNINTENDED_PURCHASE",
            purchaseDate: now.addingTimeInterval(-86_400),
            originalPurchaseDate: now.addingTimeInterval(-86_400),
            earlierRefunds: 0,
            discountRedeemed: false,
            freeTrialSeen: true,
            now: now
        )
        var late = RefundConditions()
        late.minimumSincePurchase = 20 * 86_400
        var coins = RefundConditions()
        coins.productTypes = ["Consumable"]
        let policies = RefundPolicies(
            holdoutPercent: 0,
            policies: [
                RefundPolicy(id: "decline-late", conditions: late, refundPreference: "DECLINE"),
                RefundPolicy(id: "prorate-coins", conditions: coins, refundPreference: "GRANT_PRORATED", consumptionPercentage: 40_000),
            ]
        )
        let coinsDecision = policies.decide(originalTransactionId: "1", facts: facts)
        #expect(coinsDecision.policyId == "prorate-coins")
        #expect(
            coinsDecision.body!
                == ConsumptionRequestBody(
                    consumptionPercentage: 40_000,
                    deliveryStatus: "DELIVERED",
                    refundPreference: "GRANT_PRORATED",
                    sampleContentProvided: true
                )
        )
        facts.productType = "Auto-Renewable Subscription"
        facts.purchaseDate = now.addingTimeInterval(-25 * 86_400)
        let late25 = policies.decide(originalTransactionId: "1", facts: facts)
        #expect(late25.policyId == "decline-late" && late25.body?.consumptionPercentage == nil)
        facts.purchaseDate = nil
        #expect(policies.decide(originalTransactionId: "1", facts: facts).arm == "unmatched", "an unknown purchase date meets no bound")
        let fallback = RefundDefault(deliveryStatus: "DELIVERED", sampleContentProvided: false)
        let everyone = RefundPolicies(holdoutPercent: 100, policies: policies.policies, fallback: fallback)
        let held = everyone.decide(originalTransactionId: "1", facts: facts)
        #expect(held.arm == "holdout" && held.body?.refundPreference == nil && held.body?.deliveryStatus == "DELIVERED")
        #expect(held.counterpart == RefundPolicies.noPolicy && held.body?.sampleContentProvided == false, "the default's facts, as stated")
    }

    @Test(
        "only known facts: no default, no answer; a fulfilment issue told DELIVERED only by a policy for it; the held-out answered with their counterpart's facts"
    )
    func knownFacts() {
        let now = Date()
        var facts = RefundFacts(
            productId: "com.example.monthly",
            productType: "Auto-Renewable Subscription",
            storefront: "FRA",
            reason: "UNSATISFIED_WITH_PURCHASE",
            purchaseDate: now.addingTimeInterval(-25 * 86_400),
            originalPurchaseDate: now.addingTimeInterval(-90 * 86_400),
            earlierRefunds: 0,
            discountRedeemed: false,
            freeTrialSeen: false,
            now: now
        )
        var late = RefundConditions()
        late.minimumSincePurchase = 20 * 86_400
        var france = RefundConditions()
        france.storefronts = ["FRA"]
        france.reasons = ["FULFILLMENT_ISSUE"]
        let lateDecline = RefundPolicy(id: "decline-late", conditions: late, refundPreference: "DECLINE", sampleContentProvided: true)
        let outage = RefundPolicy(
            id: "outage-france",
            conditions: france,
            refundPreference: "GRANT_FULL",
            deliveryStatus: "UNDELIVERED_SERVER_OUTAGE"
        )
        // Without a default, a request no policy matches is recorded and not answered, with why.
        var early = facts
        early.purchaseDate = now.addingTimeInterval(-2 * 86_400)
        let bare = RefundPolicies(holdoutPercent: 0, policies: [lateDecline])
        let unmatched = bare.decide(originalTransactionId: "1", facts: early)
        #expect(unmatched.arm == "unmatched" && unmatched.body == nil)
        #expect(unmatched.unanswered?.contains("no default") == true, "\(unmatched)")
        let stated = RefundPolicies(
            holdoutPercent: 0,
            policies: [lateDecline],
            fallback: RefundDefault(deliveryStatus: "DELIVERED", sampleContentProvided: true)
        )
        #expect(stated.decide(originalTransactionId: "1", facts: early).body?.sampleContentProvided == true)
        // A fulfilment issue: the general policy and the default do not say DELIVERED; a policy for the reason may.
        facts.reason = "FULFILLMENT_ISSUE"
        let general = stated.decide(originalTransactionId: "1", facts: facts)
        #expect(general.policyId == "decline-late" && general.body == nil && general.unanswered?.contains("FULFILLMENT_ISSUE") == true)
        early.reason = "FULFILLMENT_ISSUE"
        #expect(stated.decide(originalTransactionId: "1", facts: early).unanswered != nil, "the default's DELIVERED is not said either")
        var delivered = RefundConditions()
        delivered.reasons = ["FULFILLMENT_ISSUE"]
        let checked = RefundPolicies(
            holdoutPercent: 0,
            policies: [RefundPolicy(id: "checked-delivery", conditions: delivered, refundPreference: "DECLINE")],
            fallback: stated.fallback
        )
        #expect(checked.decide(originalTransactionId: "1", facts: facts).body?.deliveryStatus == "DELIVERED")
        let undelivered = RefundPolicies(holdoutPercent: 0, policies: [outage, lateDecline])
        #expect(undelivered.decide(originalTransactionId: "1", facts: facts).body?.deliveryStatus == "UNDELIVERED_SERVER_OUTAGE")
        // Held out: the counterpart's facts without its preference, and the counterpart named.
        facts.reason = "OTHER"
        let heldOut = RefundPolicies(holdoutPercent: 100, policies: [lateDecline], fallback: stated.fallback)
        let held = heldOut.decide(originalTransactionId: "1", facts: facts)
        #expect(held.arm == "holdout" && held.policyId == nil && held.counterpart == "decline-late")
        #expect(held.body == ConsumptionRequestBody(deliveryStatus: "DELIVERED", refundPreference: nil, sampleContentProvided: true))
    }

    @Test("refunds' configuration: consent other than terms, unknown values and Apple's percentage rules refused with why")
    func configuration() throws {
        func problems(_ refunds: String) -> String {
            do {
                _ = try ReclaimConfig.parse(
                    yaml: "apps: [{bundleId: a, environments: [Sandbox], serverAPI: {keyId: K, issuerId: I, file: /k.p8}, refunds: \(refunds)}]"
                )
                return ""
            } catch { return "\(error)" }
        }
        #expect(problems("{consent: app}").contains("the only value is terms"))
        #expect(problems("{consent: terms, policies: [{id: p, refundPreference: MAYBE}]}").contains("MAYBE is not one of DECLINE"))
        #expect(problems("{consent: terms, policies: [{id: p, deliveryStatus: LOST}]}").contains("LOST is not one of DELIVERED"))
        #expect(
            problems("{consent: terms, policies: [{id: p, refundPreference: GRANT_PRORATED}]}").contains(
                "GRANT_PRORATED needs a consumptionPercentage"
            )
        )
        #expect(problems("{consent: terms, policies: [{id: p, deliveryStatus: UNDELIVERED_OTHER, consumptionPercentage: 5}]}").contains("must be 0"))
        #expect(problems("{consent: terms, policies: [{id: p, conditions: {reasons: [BORED]}}]}").contains("consumptionRequestReason"))
        #expect(problems("{consent: terms, policies: [{id: p}, {id: p}]}").contains("listed twice"))
        #expect(
            problems(
                "{consent: terms, policies: [{id: p, refundPreference: GRANT_PRORATED, conditions: {productTypes: [Auto-Renewable Subscription]}}]}"
            ).isEmpty
        )
        let noKey = (try? ReclaimConfig.parse(yaml: "apps: [{bundleId: a, environments: [Sandbox], refunds: {consent: terms}}]")) == nil
        #expect(noKey, "refunds without serverAPI is refused")
        #expect(problems("{consent: terms, holdoutPercent: 10}").contains("needs refunds.default"))
        #expect(problems("{consent: terms, holdoutPercent: 10, default: {deliveryStatus: DELIVERED, sampleContentProvided: false}}").isEmpty)
        #expect(problems("{consent: terms, default: {deliveryStatus: DELIVERED}}").contains("sampleContentProvided"))
        #expect(problems("{consent: terms, default: {deliveryStatus: MAYBE, sampleContentProvided: true}}").contains("MAYBE is not one of"))
    }

    @Test("refund conditions take durations as campaigns do; the deprecated whole-day keys read the same, and are refused beside them")
    func conditionDurations() throws {
        func conditions(_ text: String) throws -> RefundConditions? {
            let config = try ReclaimConfig.parse(
                yaml:
                    "apps: [{bundleId: a, environments: [Sandbox], serverAPI: {keyId: K, issuerId: I, file: /k.p8}, refunds: {consent: terms, policies: [{id: p, conditions: \(text)}]}}]"
            )
            return config.apps.first?.refunds?.policies.first?.conditions
        }
        let durations = try conditions("{minimumSincePurchase: 20d, maximumSincePurchase: 31d, minimumTenure: 60d, maximumTenure: 12h}")
        let days = try conditions("{minDaysSincePurchase: 20, maxDaysSincePurchase: 31, minTenureDays: 60}")
        #expect(durations?.minimumSincePurchase == 20 * 86_400 && durations?.maximumSincePurchase == 31 * 86_400)
        #expect(durations?.minimumTenure == 60 * 86_400 && durations?.maximumTenure == 12 * 3600)
        #expect(days?.minimumSincePurchase == durations?.minimumSincePurchase && days?.minimumTenure == durations?.minimumTenure)
        #expect(throws: (any Error).self) { try conditions("{minimumTenure: 60d, minTenureDays: 60}") }
        #expect(throws: (any Error).self) { try conditions("{minTenureDays: 9223372036854775807}") }
    }

    @Test("serverAPI.baseURL: https, or plain http only to this machine (the bearer token never travels in clear)")
    func baseURLSchemes() throws {
        func problems(_ base: String) -> String {
            do {
                _ = try ReclaimConfig.parse(
                    yaml: "apps: [{bundleId: a, environments: [Sandbox], serverAPI: {keyId: K, issuerId: I, file: /k.p8, baseURL: \"\(base)\"}}]"
                )
                return ""
            } catch { return "\(error)" }
        }
        for accepted in [
            "https://api.storekit.itunes.apple.com", "https://proxy.internal:8443/apple", "http://127.0.0.1:8080", "http://localhost:9",
            "http://[::1]:80",
        ] {
            #expect(problems(accepted).isEmpty, "\(accepted): \(problems(accepted))")
        }
        #expect(problems("http://proxy.internal:8080").contains("bearer token would travel in clear"))
        #expect(problems("http://127.0.0.1.example.com").contains("bearer token would travel in clear"))
        #expect(problems("ftp://example.com").contains("not an https URL"))
    }

    /// Each body through app-store-server-library's `ConsumptionRequest` (cattrs, as the library reads and writes it):
    /// known enum values, and the same JSON back.
    static func checkWithApplesModel(_ bodies: [[String: Any]]) async throws -> Int {
        let script = #"""
            import json, sys
            from appstoreserverlibrary.models.ConsumptionRequest import ConsumptionRequest
            from appstoreserverlibrary.models.LibraryUtility import _get_cattrs_converter
            converter = _get_cattrs_converter(ConsumptionRequest)
            bodies = json.load(sys.stdin)
            for body in bodies:
                request = converter.structure(body, ConsumptionRequest)
                assert request.deliveryStatus is not None, body
                assert "refundPreference" not in body or request.refundPreference is not None, body
                assert converter.unstructure(request) == body, (converter.unstructure(request), body)
            print("checked", len(bodies))
            """#
        let run = try await Subprocess.run("/usr/bin/env", ["python3", "-c", script], input: try JSONSerialization.data(withJSONObject: bodies))
        guard run.status == 0, run.output.hasPrefix("checked ") else { throw PythonCrossCheck.Failure(description: "\(run.output)\(run.errors)") }
        return Int(run.output.dropFirst("checked ".count).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }
}
