import Foundation
import ReclaimDomain
import ReclaimStore
import ReclaimTestSupport
import Testing

@testable import ReclaimService

@Suite("Configuration file", .poolWatchdog)
struct ConfigTests {
    static let example = """
        apps:
          - bundleId: com.example.app
            appAppleId: 1234567890
            environments: [Production, Sandbox]
            issuerId: 00000000-0000-0000-0000-000000000000
            signingKeys:
              - keyId: ABCDEFGHIJ
                file: /etc/reclaim/SubscriptionKey_ABCDEFGHIJ.p8
            rootCertificates: []
        campaigns:
          - id: retain-auto-renew-off
            app: com.example.app
            trigger: DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED
            offer: { productId: com.example.monthly, offerIdentifier: RETAIN50 }
            deliverableFor: 7d
            cooldown: 90d
            holdoutPercent: 10
            priority: 10
        """

    @Test("the example from docs/architecture.md loads with its meanings")
    func designExample() throws {
        let config = try ReclaimConfig.parse(yaml: Self.example)
        #expect(config.apps.count == 1)
        #expect(config.apps[0].appAppleId == 1_234_567_890)
        #expect(config.apps[0].environments == ["Production", "Sandbox"])
        #expect(config.apps[0].signingKeys[0].keyId == "ABCDEFGHIJ")
        let campaign = try #require(config.campaigns.first)
        #expect(campaign.deliverableFor.seconds == 7 * 86_400)
        #expect(campaign.cooldown.seconds == 90 * 86_400)
        #expect(campaign.holdoutPercent == 10)
        #expect(campaign.offer?.offerIdentifier == "RETAIN50")
        // No worker section: the lanes default to the machine's cores, from 2 to 8.
        #expect(config.worker.concurrency == ReclaimConfig.Worker.defaultConcurrency)
        #expect((2...8).contains(config.worker.concurrency))
    }

    @Test(
        "mistakes are refused with a message naming them",
        arguments: [
            // (This case once added a second appAppleId key, and passed only because the last of two equal keys won.)
            ("appAppleId: 1234567890", "appAppleId: null", "appAppleId is required"),
            ("app: com.example.app", "app: com.other.app", "not configured under apps"),
            ("deliverableFor: 7d", "deliverableFor: 7 days", "is not a duration"),
            ("deliverableFor: 7d", "deliverableFor: -5d", "campaigns[0].deliverableFor: '-5d' is not a duration"),
            ("holdoutPercent: 10", "holdoutPercent: 120", "campaign retain-auto-renew-off: holdoutPercent: must be 0…100"),
            ("trigger: DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED", "trigger: A/B/C", "is not TYPE or TYPE/SUBTYPE"),
            ("trigger: DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED", "trigger: NOT_A_TYPE/FOO", "'NOT_A_TYPE' is not a notification type"),
            ("trigger: DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED", "trigger: EXPIRED/VOLUNTEERED", "'VOLUNTEERED' is not a notification subtype"),
            ("priority: 10", "priority: 10\n    startsAt: 2026-13-01", "startsAt: '2026-13-01' is not an ISO 8601 date"),
            ("priority: 10", "priority: 10\n    startsAt: 2026-12-01\n    endsAt: 2026-11-01", "endsAt: must be after startsAt"),
            ("priority: 10", "priority: 10\n    maxOffersPerSubscriber: 0", "maxOffersPerSubscriber: must be at least 1"),
            ("priority: 10", "priority: 10\n    conditions: {expirationIntents: [9]}", "9 is not an expirationIntent"),
            ("priority: 10", "priority: 10\n    conditions: {storefronts: [usa]}", "'usa' is not a three-letter storefront"),
            (
                "priority: 10", "priority: 10\n    conditions: {minimumTenure: 3 months}",
                "campaigns[0].conditions.minimumTenure: '3 months' is not a duration"
            ),
            ("    issuerId: 00000000-0000-0000-0000-000000000000\n", "", "has no issuerId"),
            ("environments: [Production, Sandbox]", "environments: [Production, Staging]", "unknown environment Staging"),
            // Cancel-sheet campaigns: one answer per arm, the message of a switch or an offer, UUIDs, no delay.
            (
                "trigger: DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED", "trigger: RETENTION_MESSAGING",
                "messageIdentifier: missing"
            ),
            (
                "trigger: DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED\n    offer: { productId: com.example.monthly, offerIdentifier: RETAIN50 }",
                "trigger: RETENTION_MESSAGING\n    message: not-a-uuid", "message: 'not-a-uuid' is not a UUID"
            ),
            (
                "trigger: DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED\n    offer: { productId: com.example.monthly, offerIdentifier: RETAIN50 }",
                "trigger: RETENTION_MESSAGING\n    message: 3b1ad2d2-1c1e-4d61-9f0a-6f3c1e1b2a01\n    switchTo: {productId: com.example.yearly}",
                "exactly one of message"
            ),
            (
                "trigger: DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED\n    offer: { productId: com.example.monthly, offerIdentifier: RETAIN50 }",
                "trigger: RETENTION_MESSAGING\n    switchTo: {productId: com.example.yearly, billingPlanType: YEARLY}\n    messageIdentifier: 3b1ad2d2-1c1e-4d61-9f0a-6f3c1e1b2a01",
                "'YEARLY' is not BILLED_UPFRONT or MONTHLY"
            ),
            (
                "trigger: DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED", "trigger: RETENTION_MESSAGING\n    delay: 1d\n    offerSignature: v3",
                "offerSignature: 'v3' is not v2 or v1"
            ),
            ("priority: 10", "priority: 10\n    shadow: true", "shadow: applies to a cancel-sheet campaign"),
            // The cancel flow's keys, on its kind only, and its own rules.
            ("priority: 10", "priority: 10\n    reasons: [too_expensive]", "reasons: applies to a cancel-flow campaign (trigger: CANCEL_FLOW) only"),
            (
                "trigger: DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED", "trigger: CANCEL_FLOW\n    reasons: [bored]",
                "reasons: bored is not one of app com.example.app's cancelReasons"
            ),
            (
                "trigger: DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED",
                "trigger: CANCEL_FLOW\n    messageIdentifier: 3b1ad2d2-1c1e-4d61-9f0a-6f3c1e1b2a01",
                "messageIdentifier: applies to a cancel-sheet campaign"
            ),
            (
                "trigger: DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED\n    offer: { productId: com.example.monthly, offerIdentifier: RETAIN50 }",
                "trigger: CANCEL_FLOW\n    message: roadmap\n    switchTo: {productId: com.example.yearly}", "a cancel-flow answer is exactly one of"
            ),
            ("rootCertificates: []", "rootCertificates: []\n    cancelReasons: [too_expensive]", "cancelReasons: must include refund"),
            // An unknown trigger names every kind's own trigger.
            (
                "trigger: DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED", "trigger: CANCEL_SHEET",
                "nor RETENTION_MESSAGING (the cancel sheet), nor CANCEL_FLOW"
            ),
            ("rootCertificates: []", "rootCertificates: []\n    cancelReasons: [refund, none]", "none is the subscriber's \"no answer\""),
        ]
    )
    func refused(original: String, replacement: String, message: String) {
        let yaml = Self.example.replacingOccurrences(of: original, with: replacement)
        #expect(yaml != Self.example)
        do {
            _ = try ReclaimConfig.parse(yaml: yaml, source: "test.yaml")
            Issue.record("accepted: \(replacement)")
        } catch {
            #expect("\(error)".contains(message), "\(error)")
            #expect("\(error)".contains("test.yaml"))
        }
    }

    @Test("every campaign problem is reported at once, each with its campaign and key")
    func everyCampaignProblemAtOnce() {
        let yaml = Self.example
            .replacingOccurrences(of: "holdoutPercent: 10", with: "holdoutPercent: 101")
            .replacingOccurrences(of: "trigger: DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED", with: "trigger: NOT_A_TYPE/FOO")
            .replacingOccurrences(of: "priority: 10", with: "priority: 10\n    maxOffersPerSubscriber: 0")
        do {
            _ = try ReclaimConfig.parse(yaml: yaml, source: "test.yaml")
            Issue.record("accepted")
        } catch {
            let text = "\(error)"
            for expected in [
                "campaign retain-auto-renew-off: holdoutPercent:", "campaign retain-auto-renew-off: trigger:",
                "campaign retain-auto-renew-off: maxOffersPerSubscriber:",
            ] {
                #expect(text.contains(expected), "\(text)")
            }
        }
    }

    @Test("campaign keys load with their meanings and become the rules' campaigns")
    func campaignKeys() throws {
        let yaml = Self.example.replacingOccurrences(
            of: "priority: 10",
            with: """
                priority: 10
                    maxOffersPerSubscriber: 2
                    startsAt: 2026-12-01
                    endsAt: 2027-01-01T12:00:00Z
                    standAsideForWinBack: false
                    conditions: {products: [com.example.monthly], minimumTenure: 30d, expirationIntents: [1, 2], storefronts: [USA, CAN]}
                """
        )
        let campaign = try #require(try ReclaimConfig.parse(yaml: yaml).notificationCampaigns().first)
        #expect(campaign.trigger == CampaignTrigger(type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED"))
        #expect(campaign.maxOffersPerSubscriber == 2)
        #expect(campaign.startsAt == Date(timeIntervalSince1970: 1_796_083_200))
        #expect(campaign.endsAt == Date(timeIntervalSince1970: 1_798_804_800))
        #expect(campaign.standAsideForWinBack == false)
        #expect(
            campaign.conditions
                == CampaignConditions(
                    products: ["com.example.monthly"],
                    minimumTenure: 30 * 86_400,
                    expirationIntents: [1, 2],
                    storefronts: ["USA", "CAN"]
                )
        )
        #expect(campaign.deliverableFor == 7 * 86_400)
    }
}

@Suite("Configuration problems are all reported, with where they are", .poolWatchdog)
struct ConfigProblemReportTests {
    func problems(_ yaml: String) -> String {
        do {
            _ = try ReclaimConfig.parse(yaml: yaml, source: "test.yaml")
            return "accepted"
        } catch {
            return "\(error)"
        }
    }

    @Test("server, worker and reconciliation limits that cannot work are refused, each with the reason")
    func limits() {
        let text = problems(
            """
            apps:
              - bundleId: a
                environments: [Sandbox]
                serverAPI: {keyId: K, issuerId: I, file: /k.p8, baseURL: "ftp://example.com"}
            server: {databaseConnections: 9}
            worker: {concurrency: 8}
            reconciliation: {interval: 30s, lookBack: 200d}
            """
        )
        for expected in [
            "server.databaseConnections must be at most 1000 and at least worker.concurrency + 5 (13)",
            "app a: serverAPI.baseURL ftp://example.com is not an https URL",
            "reconciliation.interval must be 0s (off) or at least 1m",
            "reconciliation.lookBack must be from 1h to 180d",
        ] {
            #expect(text.contains(expected), "\(text)")
        }
        #expect(throws: Never.self) { try ReclaimConfig.parse(yaml: "server: {databaseConnections: 13}\nworker: {concurrency: 8}") }
    }

    @Test("bundle ids are Apple's (A-Z, a-z, 0-9, hyphens, periods, reverse-DNS) before one names a file such as reclaim dev's app-keys/<bundle id>")
    func bundleIds() throws {
        func problems(_ bundleId: String) -> String {
            do {
                _ = try ReclaimConfig.parse(yaml: "apps: [{bundleId: \"\(bundleId)\", environments: [Sandbox]}]")
                return ""
            } catch { return "\(error)" }
        }
        for accepted in ["com.example.app", "GeniusParentingAI", "com.example.my-app2", "a"] {
            #expect(problems(accepted).isEmpty, "\(accepted): \(problems(accepted))")
        }
        for refused in ["../../etc/cron.d/x", "com/example", "com..example", ".hidden", "com.example.", "com.example app", "com_example", "café.app"]
        {
            #expect(problems(refused).contains("bundleId"), "\(refused) was accepted")
        }
    }

    @Test("server.retentionBudgetMilliseconds: 300 by default, 10 to 700 accepted, past Apple's ~700 ms refused with why")
    func retentionBudget() throws {
        #expect(ReclaimConfig.Server().retentionBudgetMilliseconds == 300)
        for accepted in [10, 700] {
            #expect(throws: Never.self) { try ReclaimConfig.parse(yaml: "server: {retentionBudgetMilliseconds: \(accepted)}") }
        }
        for refused in [9, 701, 1000, 60000] {
            let text = problems("server: {retentionBudgetMilliseconds: \(refused)}")
            #expect(text.contains("server.retentionBudgetMilliseconds must be from 10 to 700"), "\(refused): \(text)")
            #expect(text.contains("Apple waits about 700 ms"), "\(text)")
        }
    }

    @Test("serverAPI.requestsPerSecond: Apple's limits by default, lower ones taken, Sandbox at a tenth, unknown endpoints and higher rates refused")
    func requestsPerSecond() throws {
        func app(_ rates: String) -> String {
            "apps: [{bundleId: a, appAppleId: 1234567890, environments: [Sandbox, Production], serverAPI: {keyId: K, issuerId: I, file: /k.p8\(rates)}}]"
        }
        let defaults = try #require(try ReclaimConfig.parse(yaml: app("")).apps.first?.serverAPI)
        #expect(defaults.rate(.getAllSubscriptionStatuses, in: "Production") == 50)
        #expect(defaults.rate(.getAllSubscriptionStatuses, in: "Sandbox") == 5)
        #expect(defaults.rate(.requestTestNotification, in: "Production") == 1)
        #expect(defaults.rate(.getMessageList, in: "Production") == 1)
        let lowered = try #require(
            try ReclaimConfig.parse(yaml: app(", requestsPerSecond: {getAllSubscriptionStatuses: 20, getNotificationHistory: 2}")).apps.first?
                .serverAPI
        )
        #expect(lowered.rate(.getAllSubscriptionStatuses, in: "Production") == 20)
        #expect(lowered.rate(.getAllSubscriptionStatuses, in: "Sandbox") == 5)
        #expect(lowered.rate(.getNotificationHistory, in: "Sandbox") == 2)
        #expect(lowered.rate(.getTransactionInfo, in: "Production") == 50)
        let unknown = problems(app(", requestsPerSecond: {getEverything: 5}"))
        #expect(unknown.contains("getEverything is not an endpoint Reclaim calls") && unknown.contains("getAllSubscriptionStatuses"), "\(unknown)")
        let higher = problems(app(", requestsPerSecond: {getAllSubscriptionStatuses: 80}"))
        #expect(higher.contains("at most Apple's limit, 50"), "\(higher)")
        let zero = problems(app(", requestsPerSecond: {getNotificationHistory: 0}"))
        #expect(zero.contains("at least 0.01"), "\(zero)")
        let tiny = problems(app(", requestsPerSecond: {getNotificationHistory: 1e-300}"))
        #expect(tiny.contains("at least 0.01"), "\(tiny)")
    }

    @Test("Apple's error codes are named as Apple's documentation names them")
    func appleErrorCodes() {
        #expect(AppleErrorCode.describe(4_040_010) == "4040010 TransactionIdNotFoundError")
        #expect(AppleErrorCode.describe(4_290_000) == "4290000 RateLimitExceededError")
        #expect(AppleErrorCode.describe(4_000_035) == "4000035 InvalidCustomerConsentedError")
        #expect(AppleErrorCode.describe(4_030_017) == "4030017 MessageNotApprovedError")
        #expect(AppleErrorCode.describe(4_090_001) == "4090001 MessageAlreadyExistsError")
        #expect(AppleErrorCode.describe(1_234_567) == "1234567")
        let error = AppStoreAPIError.http(
            status: 404,
            errorCode: 4_040_010,
            message: "Transaction id not found.",
            request: "Get All Subscription Statuses",
            app: "a",
            keyId: "K"
        )
        #expect("\(error)".contains("TransactionIdNotFoundError"))
        let forbidden = AppStoreAPIError.http(
            status: 403,
            errorCode: nil,
            message: nil,
            request: "Get All Subscription Statuses",
            app: "a",
            keyId: "KEY123"
        )
        #expect(forbidden.isCredentialFailure && "\(forbidden)".contains("KEY123"))
    }

    @Test("database deadlines: defaults, values given, and values that cannot work refused with their bounds")
    func databaseDeadlines() throws {
        let defaults = try ReclaimConfig.parse(yaml: "apps: []")
        #expect(defaults.database.deadlines == .server)
        #expect(defaults.database.deadlines == Database.Deadlines(acquire: .seconds(5), query: .seconds(15), transaction: .seconds(30)))
        let given = try ReclaimConfig.parse(yaml: "database: {acquireTimeout: 2s, queryTimeout: 1m, transactionTimeout: 2m}")
        #expect(given.database.deadlines == Database.Deadlines(acquire: .seconds(2), query: .seconds(60), transaction: .seconds(120)))
        let text = problems("database: {acquireTimeout: 0s, queryTimeout: 2h, transactionTimeout: 0s}")
        for expected in [
            "database.acquireTimeout must be from 1s to 300s", "database.queryTimeout must be from 1s to 3600s",
            "database.transactionTimeout must be from 1s to 3600s",
        ] {
            #expect(text.contains(expected), "\(text)")
        }
        #expect(problems("database: {queryTimeout: soon}").contains("database.queryTimeout: 'soon' is not a duration"))
    }

    @Test("database.preparedStatements: named by default, unnamed when given, anything else refused naming both")
    func preparedStatements() throws {
        #expect(try ReclaimConfig.parse(yaml: "apps: []").database.preparedStatements == .named)
        #expect(try ReclaimConfig.parse(yaml: "database: {preparedStatements: unnamed}").database.preparedStatements == .unnamed)
        let text = problems("database: {preparedStatements: off}")
        #expect(text.contains("database.preparedStatements") && text.contains("neither named nor unnamed"), "\(text)")
    }

    @Test("a YAML syntax error names its line and column")
    func syntaxError() {
        let text = problems("apps:\n  - bundleId: a\n   environments: [Sandbox\n")
        #expect(text.contains("not valid YAML: 3:4"), "\(text)")
    }

    @Test("a key written twice in one mapping is refused with its line, at the top level, in an app and in a flow mapping")
    func duplicateKeys() {
        for (yaml, key, line) in [
            ("apps: []\ncampaigns: []\napps: []\n", "apps", "1:1"),
            ("apps:\n  - bundleId: a\n    environments: [Sandbox]\n    bundleId: b\n", "bundleId", "2:5"),
            ("apps: []\nworker: {concurrency: 2, concurrency: 4}\n", "concurrency", "2:10"),
        ] {
            let text = problems(yaml)
            #expect(text.contains("not valid YAML: \(line): the key '\(key)' is written twice in one mapping"), "\(yaml): \(text)")
        }
    }

    @Test("mistakes in several sections and list elements are reported together, each with its path")
    func everyDecodingProblem() {
        let text = problems(
            """
            apps:
              - bundleId: a
                environments: [Sandbox]
                appAppleId: notanumber
              - environments: [Sandbox]
            campaigns:
              - {id: c, app: a, trigger: EXPIRED, offer: {productId: p, offerIdentifier: o}, cooldown: 3 months}
            worker: {concurrency: many}
            """
        )
        for expected in [
            "apps[0].appAppleId: expected a whole number", "apps[1].bundleId: missing", "campaigns[0].cooldown: '3 months' is not a duration",
            "worker.concurrency: expected a whole number",
        ] {
            #expect(text.contains(expected), "\(text)")
        }
    }

    @Test("an unknown key anywhere is refused with its path and the nearest known key; campaigns check fails on it")
    func unknownKeys() {
        let text = problems(
            """
            apps:
              - bundleId: a
                environments: [Sandbox]
                issuerID: X
                signingKeys: [{keyId: K, file: /k.p8, fille: /k.p8}]
                serverAPI: {keyId: K, issuerId: I, file: /k.p8, baseUrl: "https://x"}
            campaigns:
              - id: c
                app: a
                trigger: EXPIRED
                offer: {productId: p, offerIdentifier: o, offerIdentifer: o}
                holdoutPercentage: 10
                conditions: {product: [p]}
            server: {maxBodyByte: 4096}
            worker: {concurency: 4}
            offers: {resignAfer: 1h}
            reconciliation: {lookback: 24h}
            database: {queryTimout: 5s}
            campaign: []
            """
        )
        for expected in [
            "apps[0].issuerID: unknown key; did you mean `issuerId`?",
            "apps[0].signingKeys[0].fille: unknown key; did you mean `file`?",
            "apps[0].serverAPI.baseUrl: unknown key; did you mean `baseURL`?",
            "campaigns[0].offer.offerIdentifer: unknown key; did you mean `offerIdentifier`?",
            "campaigns[0].holdoutPercentage: unknown key; did you mean `holdoutPercent`?",
            "campaigns[0].conditions.product: unknown key; did you mean `products`?",
            "server.maxBodyByte: unknown key; did you mean `maxBodyBytes`?",
            "worker.concurency: unknown key; did you mean `concurrency`?",
            "offers.resignAfer: unknown key; did you mean `resignAfter`?",
            "reconciliation.lookback: unknown key; did you mean `lookBack`?",
            "database.queryTimout: unknown key; did you mean `queryTimeout`?",
            "campaign: unknown key; did you mean `campaigns`?",
        ] {
            #expect(text.contains(expected), "\(expected)\n\(text)")
        }
        let unrelated = problems("apps: []\nserver: {zzzzzz: 1}")
        #expect(unrelated.contains("server.zzzzzz: unknown key (known here:"), "\(unrelated)")
    }

    @Test("serverAPI may name a signing key instead of repeating the .p8, and takes the app's issuerId; mistakes name the path")
    func serverAPISigningKey() throws {
        let app = """
            apps:
              - bundleId: a
                environments: [Sandbox]
                issuerId: ISSUER
                signingKeys: [{keyId: KEY1, file: /keys/one.p8}, {keyId: KEY2, file: /keys/two.p8}]
            """
        let named = try ReclaimConfig.parse(yaml: app + "\n    serverAPI: {signingKey: KEY2}")
        let api = try #require(named.apps[0].serverAPI)
        #expect(api.keyId == "KEY2")
        #expect(api.file == "/keys/two.p8")
        #expect(api.issuerId == "ISSUER")
        let own = try ReclaimConfig.parse(yaml: app + "\n    serverAPI: {keyId: API, issuerId: OTHER, file: /keys/api.p8}")
        #expect(own.apps[0].serverAPI?.keyId == "API")
        #expect(own.apps[0].serverAPI?.issuerId == "OTHER")
        for (tail, expected) in [
            ("serverAPI: {signingKey: KEY9}", "apps[0].serverAPI: signingKey KEY9 is not one of the app's signingKeys (KEY1, KEY2)"),
            ("serverAPI: {signingKey: KEY1, file: /x.p8}", "apps[0].serverAPI.file: give either signingKey or keyId and file"),
            ("serverAPI: {keyId: API}", "apps[0].serverAPI.file: missing"),
        ] {
            let text = problems(app + "\n    " + tail)
            #expect(text.contains(expected), "\(text)")
        }
        let noIssuer = problems("apps:\n  - {bundleId: a, environments: [Sandbox], serverAPI: {keyId: K, file: /k.p8}}")
        #expect(noIssuer.contains("apps[0].serverAPI: issuerId is missing"), "\(noIssuer)")
    }
}

@Suite("Signing keys are read at start-up", .poolWatchdog)
struct SigningKeyStartupTests {
    @Test("a missing or broken .p8 stops start-up with the file and the reason, never the key")
    func brokenKeys() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reclaim-keys-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let broken = directory.appendingPathComponent("broken.p8")
        try "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n".write(to: broken, atomically: true, encoding: .utf8)
        let config = try ReclaimConfig.parse(
            yaml: """
                apps:
                  - bundleId: com.example.a
                    environments: [Sandbox]
                    signingKeys: [{keyId: ABCDEFGHIJ, file: \(directory.path)/missing.p8}]
                  - bundleId: com.example.b
                    environments: [Sandbox]
                    signingKeys: [{keyId: ABCDEFGHIJ, file: \(broken.path)}]
                """
        )
        do {
            _ = try config.offerSigners()
            Issue.record("accepted broken keys")
        } catch {
            let text = "\(error)"
            #expect(text.contains("com.example.a: signing key ABCDEFGHIJ: cannot read \(directory.path)/missing.p8"), "\(text)")
            #expect(text.contains("com.example.b: signing key ABCDEFGHIJ"), "\(text)")
            #expect(text.contains(broken.path), "\(text)")
            #expect(!text.contains("bm90IGEga2V5"))
        }
    }
}
