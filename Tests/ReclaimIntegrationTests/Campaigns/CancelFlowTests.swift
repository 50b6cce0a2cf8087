import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import ReclaimDomain
import ReclaimService
import ReclaimStore
import ReclaimTestSupport
import Testing

/// The app's cancel flow (`POST /v1/cancel-flow`) over a real socket and a real database: cancel intents of 160
/// subscribers with reasons, answered by two arms and a holdout, each offer verified as Apple would; Apple's
/// AUTO_RENEW_DISABLED for some; the save rates read back.
@Suite("The in-app cancel flow", .poolWatchdog)
struct CancelFlowTests {
    static let monthly = CancelSheetTests.monthly
    static let yearly = "ca.geniusparentingai.basic.yearly"

    /// A holdout of 20% and two arms (an offer, a message) for the price; a switch for those not using it.
    static let campaigns = """
          - id: save-in-app
            app: GeniusParentingAI
            trigger: CANCEL_FLOW
            holdoutPercent: 20
            cooldown: 30d
            saveWindow: 30d
            reasons: [too_expensive, none]
            variants:
              - {id: half, offer: {productId: \(monthly), offerIdentifier: SAVE50}, weight: 1}
              - {id: note, message: roadmap-2027, weight: 1}
          - id: switch-down
            app: GeniusParentingAI
            trigger: CANCEL_FLOW
            reasons: [not_using]
            switchTo: {productId: \(yearly)}
        """

    struct FlowAnswer: Decodable {
        struct Answer: Decodable {
            let kind: String
            let campaign: String?
            let variant: String?
            let message: String?
            let productIdentifier: String?
            let offer: OfferDeliveryTests.Answer.Offer?
        }
        let flowId: String
        let originalTransactionId: String?
        let reason: String?
        let answer: Answer
        let next: String
    }

    /// The config's campaigns mirrored, and `subscribers` known to Reclaim as monthly subscribers (their INITIAL_BUY,
    /// signed by `ca`, processed); the dependencies of a server on `client`.
    static func subscribed(
        _ subscribers: [(otid: String, token: UUID)],
        setup: CampaignTestSetup,
        ca: TestCertificateAuthority,
        client: Database
    ) async throws -> Dependencies {
        let notifications = TestNotifications(ca: ca, bundleId: "GeniusParentingAI", environment: "Sandbox", appAppleId: 6_747_332_178)
        try await client.withConnection(logger: TestPostgres.logger) {
            try await CampaignStore.sync(try setup.config.domainCampaigns(), connection: $0, logger: TestPostgres.logger)
        }
        let dependencies = try Dependencies.test(postgres: client, config: setup.config)
        try await processNotifications(
            try subscribers.map {
                try notifications.body(
                    type: "SUBSCRIBED",
                    subtype: "INITIAL_BUY",
                    originalTransactionId: $0.otid,
                    appAccountToken: $0.token,
                    signedDate: Date().addingTimeInterval(-3600),
                    transactionFields: ["productId": monthly, "expiresDate": expires]
                )
            },
            client: client,
            dependencies: dependencies
        )
        return dependencies
    }

    /// A cancel-flow body naming the subscriber of `otid` by a monthly transaction `ca` signed ("too_expensive").
    static func intent(_ ca: TestCertificateAuthority, otid: String, token: UUID?) throws -> Data {
        var transaction: [String: Any] = [
            "originalTransactionId": otid, "transactionId": otid, "bundleId": "GeniusParentingAI", "productId": monthly,
            "environment": "Sandbox", "signedDate": Int64(Date().timeIntervalSince1970 * 1000), "type": "Auto-Renewable Subscription",
            "expiresDate": expires,
        ]
        if let token { transaction["appAccountToken"] = token.uuidString.lowercased() }
        return try JSONSerialization.data(withJSONObject: ["signedTransaction": try ca.sign(json: transaction), "reason": "too_expensive"])
    }

    /// When the subscribers' period ends: in 20 days.
    static let expires = Int64(Date().addingTimeInterval(20 * 86_400).timeIntervalSince1970 * 1000)

    @Test(
        "160 subscribers through two arms and a holdout by reason: offers verified, the live offer replaced, AUTO_RENEW_DISABLED lost, the rates read"
    )
    func flowAnswersAndSaveRates() async throws {
        let ca = try TestCertificateAuthority()
        let setup = try CampaignTestSetup(ca: ca, settings: Self.campaigns)
        defer { setup.remove() }
        let notifications = TestNotifications(ca: ca, bundleId: "GeniusParentingAI", environment: "Sandbox", appAppleId: 6_747_332_178)
        let expires = Self.expires
        let subscribers = (0..<160).map { (otid: String(3_100_000_000_000_000 + $0), token: UUID()) }
        try await withTestDatabase { client, url in
            let dependencies = try await Self.subscribed(subscribers, setup: setup, ca: ca, client: client)
            let appKey = try await TestKeys(client: client).create(scope: .app, bundleId: "GeniusParentingAI", logger: TestPostgres.logger)
            let app = Application(router: buildRouter(dependencies), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.live) { http in
                func post(_ uri: String, _ body: [String: Any?]) async throws -> (HTTPResponse.Status, String) {
                    let data = try JSONSerialization.data(withJSONObject: body.mapValues { $0 ?? NSNull() })
                    return try await http.execute(
                        uri: uri,
                        method: .post,
                        headers: [.contentType: "application/json", .authorization: "Bearer \(appKey)"],
                        body: ByteBuffer(bytes: data)
                    ) { ($0.status, String(buffer: $0.body)) }
                }
                func start(_ token: UUID, reason: String?, canShow: [String]? = nil) async throws -> FlowAnswer {
                    let (status, body) = try await post(
                        "/v1/cancel-flow",
                        ["appAccountToken": token.uuidString.lowercased(), "reason": reason, "canShow": canShow]
                    )
                    #expect(status == .ok, "\(body)")
                    return try JSONDecoder().decode(FlowAnswer.self, from: Data(body.utf8))
                }

                // Reasons: half too expensive, a quarter no answer, an eighth not using it, the rest refund.
                func reason(_ index: Int) -> String? {
                    switch index % 8 {
                    case 0...3: "too_expensive"
                    case 4, 5: nil
                    case 6: "not_using"
                    default: "refund"
                    }
                }
                var answers: [Int: FlowAnswer] = [:]
                for (index, subscriber) in subscribers.enumerated() {
                    answers[index] = try await start(subscriber.token, reason: reason(index))
                }
                var kinds: [String: Int] = [:]
                var offers: [PythonCrossCheck.Offer] = []
                for (index, answer) in answers.sorted(by: { $0.key < $1.key }) {
                    let subscriber = subscribers[index]
                    kinds["\(answer.answer.campaign ?? "-")/\(answer.answer.kind)", default: 0] += 1
                    #expect(answer.originalTransactionId == subscriber.otid)
                    #expect(answer.next == (reason(index) == "refund" ? "refundRequest" : "manageSubscriptions"), "\(answer)")
                    switch reason(index) {
                    case "refund":
                        #expect(answer.answer.kind == "none" && answer.answer.campaign == nil, "no campaign takes refund")
                    case "not_using":
                        #expect(answer.answer.kind == "switch" && answer.answer.productIdentifier == Self.yearly)
                    default:
                        #expect(["offer", "message", "none"].contains(answer.answer.kind))
                        #expect(answer.answer.campaign == "save-in-app")
                    }
                    if answer.answer.kind == "message" { #expect(answer.answer.message == "roadmap-2027" && answer.answer.variant == "note") }
                    if let offer = answer.answer.offer {
                        #expect(answer.answer.variant == "half" && offer.offerIdentifier == "SAVE50" && offer.productIdentifier == Self.monthly)
                        let token = subscriber.token.uuidString.lowercased()
                        offers.append(
                            .init(
                                payload: [
                                    "GeniusParentingAI", offer.storeKit1.keyIdentifier, offer.productIdentifier, offer.offerIdentifier, token,
                                    offer.storeKit1.nonce, String(offer.storeKit1.timestamp),
                                ].joined(separator: "\u{2063}"),
                                signature: offer.storeKit1.signature,
                                jws: offer.storeKit2.compactJWS,
                                expectedClaims: [
                                    "nonce": offer.storeKit1.nonce, "offerIdentifier": "SAVE50", "transactionId": subscriber.otid,
                                    "bid": "GeniusParentingAI",
                                ]
                            )
                        )
                    }
                }
                // The split of the 120 who take save-in-app: a 20% holdout, then the two arms alike, each within 4σ.
                func within4σ(_ count: Int, of n: Int, share p: Double) -> Bool {
                    abs(Double(count) - Double(n) * p) <= 4 * (Double(n) * p * (1 - p)).squareRoot()
                }
                let held = kinds["save-in-app/none", default: 0]
                #expect(within4σ(held, of: 120, share: 0.2), "\(kinds)")
                #expect(within4σ(kinds["save-in-app/offer", default: 0], of: 120 - held, share: 0.5), "\(kinds)")
                #expect(kinds["switch-down/switch"] == 20 && kinds["-/none"] == 20, "\(kinds)")
                // Every offer as Apple would check it: StoreKit 1 over Apple's payload with Python's cryptography, the
                // StoreKit 2 JWS with PyJWT and its claims.
                #expect(!offers.isEmpty)
                #expect(
                    try await PythonCrossCheck.verify(offers, publicKeyPEM: setup.key.publicKey.pemRepresentation, keyId: "TESTKEY001")
                        == offers.count
                )

                // The offer is the subscriber's one live offer, handed out with its signature: GET /v1/offers signs it anew.
                let offered = try #require(answers.first { $0.value.answer.kind == "offer" })
                let live = try await firstInt(
                    client,
                    """
                    SELECT count(*)::int FROM reclaim.offers
                    WHERE original_transaction_id = '\(subscribers[offered.key].otid)' AND state = 'delivered' AND signature_delivered
                      AND cancel_flow_decision_id = '\(offered.value.flowId)'
                    """
                )
                #expect(live == 1)
                // Asked again within the cooldown: the same arm, a new offer, the older one withdrawn.
                let again = try await start(subscribers[offered.key].token, reason: reason(offered.key))
                #expect(again.answer.kind == "offer" && again.answer.offer?.id != offered.value.answer.offer?.id)
                #expect(
                    try await firstInt(
                        client,
                        """
                        SELECT count(*)::int FROM reclaim.offers WHERE original_transaction_id = '\(subscribers[offered.key].otid)'
                          AND state = 'withdrawn' AND end_reason LIKE 'superseded by the cancel flow%'
                        """
                    ) == 1
                )

                // Steps for the funnel; an unknown flow is 404, an unknown step 400.
                #expect(try await post("/v1/cancel-flow/events", ["flowId": offered.value.flowId, "step": "declined"]).0 == .noContent)
                #expect(try await post("/v1/cancel-flow/events", ["step": "survey_skipped"]).0 == .noContent)
                #expect(try await post("/v1/cancel-flow/events", ["flowId": UUID().uuidString, "step": "declined"]).0 == .notFound)
                #expect(try await post("/v1/cancel-flow/events", ["flowId": offered.value.flowId, "step": "teleported"]).0 == .badRequest)
                // The subscriber's story shows each flow with its steps.
                let story = try await client.withConnection(logger: TestPostgres.logger) {
                    try await SubscriberStore.story(
                        SubscriberLookup(.originalTransactionId(subscribers[offered.key].otid)),
                        connection: $0,
                        logger: TestPostgres.logger
                    )
                }
                let flows = try #require(story.subscriptions.first?.cancelFlows)
                #expect(flows.count == 2 && flows.allSatisfy { $0.campaign == "save-in-app" && $0.answer == "offer" && $0.variant == "half" })
                #expect(
                    flows.first?.steps == ["declined"] && flows.last?.steps == [] && flows.first?.saveOutcome == "open"
                        && flows.last?.saveOutcome == nil
                )

                // A reason the app does not list is refused with the list.
                let (status, body) = try await post("/v1/cancel-flow", ["appAccountToken": subscribers[0].token.uuidString, "reason": "bored"])
                #expect(status == .badRequest && body.contains("too_expensive"), "\(body)")
                // What the app cannot show is not shown: without messages, save-in-app is skipped for its message arm.
                let noMessages = try await start(subscribers[0].token, reason: "too_expensive", canShow: ["offer", "switch"])
                #expect(noMessages.answer.kind == "none")

                // Apple: auto-renew turned off by every third subscriber who took save-in-app.
                let disabled = subscribers.indices.filter { answers[$0]?.answer.campaign == "save-in-app" && $0 % 3 == 0 }
                try await processNotifications(
                    try disabled.map {
                        try notifications.body(
                            type: "DID_CHANGE_RENEWAL_STATUS",
                            subtype: "AUTO_RENEW_DISABLED",
                            originalTransactionId: subscribers[$0].otid,
                            appAccountToken: subscribers[$0].token,
                            transactionFields: ["productId": Self.monthly, "expiresDate": expires]
                        )
                    },
                    client: client,
                    dependencies: dependencies
                )
                var lost: [String: Int] = [:]
                var first: [String: Int] = [:]
                for index in disabled { lost[answers[index]?.answer.variant ?? "", default: 0] += 1 }
                for index in subscribers.indices where answers[index]?.answer.campaign == "save-in-app" {
                    first[answers[index]?.answer.variant ?? "", default: 0] += 1
                }
                let rows = try await client.query(
                    """
                    SELECT variant_id, saved, lost, open, kept_rate, kept_rate_lower, kept_rate_upper, held_out_lost, held_out_open, kept_lift_lower
                    FROM reclaim.cancel_flow_save_rates WHERE campaign_id = 'save-in-app' AND survey_reason = '*' ORDER BY variant_id
                    """,
                    logger: TestPostgres.logger
                )
                var read = 0
                for try await (variant, saved, lostCount, open, kept, lower, upper, heldLost, heldOpen, liftLower) in rows.decode(
                    (String, Int64, Int64, Int64, Double?, Double?, Double?, Int64, Int64, Double?).self
                ) {
                    read += 1
                    #expect(saved == 0, "the 30-day window runs")
                    #expect(lostCount == Int64(lost[variant, default: 0]), "\(variant)")
                    #expect(lostCount + open == Int64(first[variant, default: 0]), "\(variant)")
                    #expect(heldLost == Int64(lost[""] ?? 0) && heldLost + heldOpen == Int64(first[""] ?? 0))
                    let rate = Double(open) / Double(lostCount + open)
                    #expect(kept.map { abs($0 - rate) < 1e-9 } == true)
                    #expect(lower.map { $0 < rate } == true && upper.map { $0 > rate } == true, "a Wilson interval around the rate")
                    #expect(liftLower != nil)
                }
                #expect(read == 2, "one row per arm")
                // (After the rates, which count the 160.) A subscriber Reclaim has no notification of, proven by a transaction Apple signed: decided on what the
                // transaction says, recorded, and its offer (if any) signed for that subscription.
                let newcomer = "3100000000999999"
                let signed = try ca.sign(json: [
                    "originalTransactionId": newcomer, "transactionId": newcomer, "bundleId": "GeniusParentingAI", "productId": Self.monthly,
                    "environment": "Sandbox", "signedDate": Int64(Date().timeIntervalSince1970 * 1000), "type": "Auto-Renewable Subscription",
                    "expiresDate": expires,
                ])
                let (proven, provenBody) = try await post("/v1/cancel-flow", ["signedTransaction": signed, "reason": "too_expensive"])
                #expect(proven == .ok, "\(provenBody)")
                let provenAnswer = try JSONDecoder().decode(FlowAnswer.self, from: Data(provenBody.utf8))
                #expect(provenAnswer.originalTransactionId == newcomer && provenAnswer.answer.campaign == "save-in-app", "\(provenBody)")
                #expect(
                    try await firstInt(
                        client,
                        "SELECT count(*)::int FROM reclaim.cancel_flow_decisions WHERE original_transaction_id = '\(newcomer)'"
                    ) == 1
                )
                // Naming the subscriber twice, or not at all, is refused.
                #expect(try await post("/v1/cancel-flow", ["reason": nil]).0 == .badRequest)

                // Per reason too, and in campaigns report.
                #expect(
                    try await firstInt(
                        client,
                        "SELECT count(*)::int FROM reclaim.cancel_flow_save_rates WHERE campaign_id = 'save-in-app' AND survey_reason = 'none'"
                    ) == 2
                )
            }
            let report = try await CampaignTasks.report(
                campaign: "save-in-app",
                environment: "Sandbox",
                json: false,
                url: url,
                logger: TestPostgres.logger
            )
            #expect(report.contains("Cancel flow"), "\(report)")
            #expect(report.contains("save-in-app, variant half") && report.contains("reason too_expensive"), "\(report)")
        }
    }

    @Test(
        "at the edges: a double tap decides once; a forgotten subscriber is not stored again; a held row answers none within the deadline; steps without a flow, and long errors, refused"
    )
    func edges() async throws {
        let ca = try TestCertificateAuthority()
        let setup = try CampaignTestSetup(ca: ca, settings: Self.campaigns)
        defer { setup.remove() }
        let subscribers = (0..<3).map { (otid: String(3_100_000_000_000_100 + $0), token: UUID()) }
        try await withTestDatabase { client, _ in
            let dependencies = try await Self.subscribed(subscribers, setup: setup, ca: ca, client: client)
            let appKey = try await TestKeys(client: client).create(scope: .app, bundleId: "GeniusParentingAI", logger: TestPostgres.logger)
            let app = Application(router: buildRouter(dependencies), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.ahc(.http)) { http in
                @Sendable func post(_ uri: String, _ body: [String: Any?]) async throws -> (HTTPResponse.Status, String) {
                    let data = try JSONSerialization.data(withJSONObject: body.mapValues { $0 ?? NSNull() })
                    return try await http.execute(
                        uri: uri,
                        method: .post,
                        headers: [.contentType: "application/json", .authorization: "Bearer \(appKey)"],
                        body: ByteBuffer(bytes: data)
                    ) { ($0.status, String(buffer: $0.body)) }
                }
                func count(_ otid: String, _ condition: String = "true") async throws -> Int? {
                    try await firstInt(
                        client,
                        "SELECT count(*)::int FROM reclaim.cancel_flow_decisions WHERE original_transaction_id = '\(otid)' AND \(condition)"
                    )
                }

                // A double tap: six intents at once, one first decision (the others repeat it), every answer 200.
                let tapped = subscribers[0]
                let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                    for _ in 0..<6 {
                        group.addTask {
                            try await post("/v1/cancel-flow", ["appAccountToken": tapped.token.uuidString, "reason": "too_expensive"]).0
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses.allSatisfy { $0 == .ok }, "\(statuses)")
                #expect(try await count(tapped.otid, "repeat_of IS NULL") == 1)
                #expect(try await count(tapped.otid) == 6)
                #expect(
                    try await count(tapped.otid, "repeat_of IS NULL AND follows = '00000000-0000-0000-0000-000000000001'") == 1,
                    "a first decision names that it follows none, so the unique index holds it"
                )

                // A row another transaction holds: answered none within the deadline, nothing recorded.
                let held = subscribers[1]
                try await client.withConnection(logger: TestPostgres.logger) { connection in
                    try await connection.query("BEGIN", logger: TestPostgres.logger)
                    try await connection.query(
                        "SELECT 1 FROM reclaim.subscriptions WHERE original_transaction_id = \(held.otid) FOR UPDATE",
                        logger: TestPostgres.logger
                    )
                    let (status, body) = try await post("/v1/cancel-flow", ["appAccountToken": held.token.uuidString, "reason": "too_expensive"])
                    try await connection.query("ROLLBACK", logger: TestPostgres.logger)
                    #expect(status == .ok && body.contains(#""kind":"none""#), "\(body)")
                }
                #expect(try await count(held.otid) == 0)

                // Forgotten on request: proven by a signed transaction afterwards, nothing of them is stored again.
                let forgotten = subscribers[2]
                _ = try await client.transaction(logger: TestPostgres.logger) {
                    try await SubscriberErasure.forget(
                        SubscriberLookup(.originalTransactionId(forgotten.otid)),
                        connection: $0,
                        logger: TestPostgres.logger
                    )
                }
                let signed = try ca.sign(json: [
                    "originalTransactionId": forgotten.otid, "transactionId": forgotten.otid, "bundleId": "GeniusParentingAI",
                    "productId": Self.monthly, "environment": "Sandbox", "signedDate": Int64(Date().timeIntervalSince1970 * 1000),
                    "type": "Auto-Renewable Subscription", "appAccountToken": forgotten.token.uuidString.lowercased(),
                ])
                let (status, body) = try await post("/v1/cancel-flow", ["signedTransaction": signed, "reason": "too_expensive"])
                #expect(status == .ok && body.contains(#""kind":"none""#), "\(body)")
                #expect(try await count(forgotten.otid) == 0)
                #expect(
                    try await firstInt(client, "SELECT count(*)::int FROM reclaim.offers WHERE original_transaction_id = '\(forgotten.otid)'") == 0
                )

                // Steps: only survey_skipped comes without a flow; an error is counted as the database counts it.
                #expect(try await post("/v1/cancel-flow/events", ["step": "purchased"]).0 == .badRequest)
                let flowId = try #require(
                    try await client.query("SELECT id FROM reclaim.cancel_flow_decisions LIMIT 1", logger: TestPostgres.logger)
                        .decode(UUID.self).first { _ in true }
                )
                let flags = String(repeating: "🇫🇷", count: 300)  // 300 characters to Swift, 600 code points to PostgreSQL
                let (errorStatus, errorBody) = try await post(
                    "/v1/cancel-flow/events",
                    ["flowId": flowId.uuidString, "step": "purchase_failed", "error": flags]
                )
                #expect(errorStatus == .badRequest, "\(errorBody)")
            }
        }
    }

    @Test(
        "a flow for a subscriber never stored, asked while their erasure is uncommitted, waits for it and stores nothing of them (it stored them again)"
    )
    func forgottenMeanwhile() async throws {
        let ca = try TestCertificateAuthority()
        let setup = try CampaignTestSetup(ca: ca, settings: Self.campaigns)
        defer { setup.remove() }
        let otid = "3100000000000200"
        let token = UUID()
        try await withTestDatabase { client, _ in
            let dependencies = try await Self.subscribed([], setup: setup, ca: ca, client: client)
            let appKey = try await TestKeys(client: client).create(scope: .app, bundleId: "GeniusParentingAI", logger: TestPostgres.logger)
            let app = Application(router: buildRouter(dependencies), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            let body = try Self.intent(ca, otid: otid, token: token)
            try await app.test(.ahc(.http)) { http in
                // The app asks while the subscriber's erasure is not yet committed.
                let (status, text) = try await whileForgetting(SubscriberLookup(.originalTransactionId(otid)), client: client) {
                    try await http.execute(
                        uri: "/v1/cancel-flow",
                        method: .post,
                        headers: [.contentType: "application/json", .authorization: "Bearer \(appKey)"],
                        body: ByteBuffer(bytes: body)
                    ) { ($0.status, String(buffer: $0.body)) }
                }
                #expect(status == .ok && text.contains(#""kind":"none""#), "\(text)")
            }
            for (table, column) in [
                ("subscriptions", "original_transaction_id"), ("cancel_flow_decisions", "original_transaction_id"),
                ("offers", "original_transaction_id"), ("subscriptions", "app_account_token::text"),
            ] {
                let needle = column.hasPrefix("app_account_token") ? token.uuidString.lowercased() : otid
                #expect(
                    try await firstInt(client, "SELECT count(*)::int FROM reclaim.\(table) WHERE \(column) = '\(needle)'") == 0,
                    "\(table).\(column) names the forgotten subscriber"
                )
            }
        }
    }

    @Test("a flow needs one connection at a time: with one free in the pool it is answered its offer (it waited for a second until its deadline)")
    func oneConnection() async throws {
        let ca = try TestCertificateAuthority()
        let setup = try CampaignTestSetup(ca: ca, settings: Self.campaigns)
        defer { setup.remove() }
        let otid = "3100000000000300"
        try await withTestDatabase(maxConnections: 2) { client, _ in
            let dependencies = try await Self.subscribed([], setup: setup, ca: ca, client: client)
            let appKey = try await TestKeys(client: client).create(scope: .app, bundleId: "GeniusParentingAI", logger: TestPostgres.logger)
            let app = Application(router: buildRouter(dependencies), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            let body = try Self.intent(ca, otid: otid, token: nil)
            try await app.test(.router) { http in
                // The other connection is busy elsewhere (the first read of the stops needs one).
                let text = try await client.withConnection(logger: TestPostgres.logger) { _ in
                    try await http.execute(
                        uri: "/v1/cancel-flow",
                        method: .post,
                        headers: [.contentType: "application/json", .authorization: "Bearer \(appKey)"],
                        body: ByteBuffer(bytes: body)
                    ) { String(buffer: $0.body) }
                }
                #expect(text.contains(#""kind":"offer""#), "\(text)")
            }
        }
    }
}
