import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import ReclaimDomain
import ReclaimService
import ReclaimStore
import ReclaimTestSupport
import Testing

/// Cancel-sheet campaigns (trigger RETENTION_MESSAGING) answering Apple's realtime request over a real socket: each
/// answer read back by Apple's own Python library, the JWS by PyJWT, the split against the weights.
@Suite("Cancel-sheet campaigns", .poolWatchdog)
struct CancelSheetTests {
    static let messageId = "3b1ad2d2-1c1e-4d61-9f0a-6f3c1e1b2a01"
    static let switchMessageId = "3b1ad2d2-1c1e-4d61-9f0a-6f3c1e1b2a02"
    static let offerMessageId = "3b1ad2d2-1c1e-4d61-9f0a-6f3c1e1b2a03"
    static let v1MessageId = "3b1ad2d2-1c1e-4d61-9f0a-6f3c1e1b2a04"
    static let monthly = "ca.geniusparentingai.basic.monthly"
    static let premium = "ca.geniusparentingai.premium.monthly"

    /// A holdout of 20%, three arms weighted 1:1:2; a campaign for premium subscribers signing V1; `extra` after them.
    static func campaigns(extra: String = "") -> String {
        """
          - id: cancel-sheet
            app: GeniusParentingAI
            trigger: RETENTION_MESSAGING
            holdoutPercent: 20
            cooldown: 30d
            priority: 10
            variants:
              - {id: message, message: \(messageId), weight: 1}
              - {id: switch, switchTo: {productId: ca.geniusparentingai.basic.yearly, billingPlanType: BILLED_UPFRONT}, messageIdentifier: \(switchMessageId), weight: 1}
              - {id: offer, offer: {productId: \(monthly), offerIdentifier: SAVE50}, messageIdentifier: \(offerMessageId), weight: 2}
          - id: cancel-sheet-premium
            app: GeniusParentingAI
            trigger: RETENTION_MESSAGING
            priority: 20
            conditions: {products: [\(premium)]}
            offer: {productId: \(premium), offerIdentifier: PREMIUM30}
            messageIdentifier: \(v1MessageId)
            offerSignature: v1
        \(extra)
        """
    }

    static func request(
        _ ca: TestCertificateAuthority,
        originalTransactionId: String,
        productId: String = monthly,
        appAppleId: Int64 = 6_747_332_178,
        requestIdentifier: String = UUID().uuidString.lowercased()
    ) throws -> String {
        let jws = try ca.sign(
            RealtimeRequest(
                originalTransactionId: originalTransactionId,
                appAppleId: appAppleId,
                productId: productId,
                userLocale: "en-US",
                requestIdentifier: requestIdentifier,
                signedDate: Int64(Date().timeIntervalSince1970 * 1000),
                environment: .sandbox
            )
        )
        return "{\"signedPayload\": \"\(jws)\"}"
    }

    /// Runs `body` with a poster of realtime requests to a live server on `setup`'s config and `database`. The budget
    /// is the largest the product allows unless the test is about the budget (then it names one).
    static func withServer(
        _ setup: CampaignTestSetup,
        database: Database,
        budgetMilliseconds: Int = ReclaimConfig.Server.retentionBudgetLimits.upperBound,
        _ body: @Sendable (_ post: @escaping @Sendable (String) async throws -> (HTTPResponse.Status, String)) async throws -> Void
    ) async throws {
        let dependencies = try Dependencies.test(postgres: database, config: setup.config, retentionBudgetMilliseconds: budgetMilliseconds)
        let app = Application(router: buildRouter(dependencies), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        // AsyncHTTPClient, its pool of connections: requests posted at once reach the server at once (the live test
        // client has one connection, so its "simultaneous" requests were answered one after the other).
        try await app.test(.ahc(.http)) { http in
            try await body { payload in
                try await http.execute(
                    uri: "/v1/apple/retention-messaging",
                    method: .post,
                    headers: [.contentType: "application/json"],
                    body: ByteBuffer(string: payload)
                ) { ($0.status, String(buffer: $0.body)) }
            }
        }
    }

    static func json(_ body: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any], "\(body)")
    }

    @Test("holdout {} and each arm's answer, read back unchanged by Apple's RealtimeResponseBody; JWS and V1 verified; sticky; split within ±4σ")
    func answersAndSplit() async throws {
        let ca = try TestCertificateAuthority()
        let setup = try CampaignTestSetup(ca: ca, settings: Self.campaigns())
        defer { setup.remove() }
        try await withTestDatabase { client, _ in
            try await Self.withServer(setup, database: client) { post in
                let subscribers = 400
                var kinds: [String: Int] = [:]
                var samples: [String: (id: String, body: String)] = [:]
                // Each subscriber's decision as the product made it: a request the budget cut (a busy machine) is
                // asked again, and its `{}` is not taken for the holdout's.
                for index in 0..<subscribers {
                    let id = String(3_000_000_000_000_000 + index)
                    let (_, body) = try await CancelSheetRecords.decided(client, post: post) {
                        try Self.request(ca, originalTransactionId: id, requestIdentifier: $0)
                    }
                    let answer = try Self.json(body)
                    #expect(answer.count <= 1, "one of Apple's keys at most: \(body)")
                    let kind = answer.keys.first ?? "{}"
                    kinds[kind, default: 0] += 1
                    if samples[kind] == nil { samples[kind] = (id, body) }
                }
                // The split: holdout 20% of all; arms 1:1:2 of the rest; each within four standard deviations.
                func within4σ(_ count: Int, of n: Int, share p: Double) -> Bool {
                    abs(Double(count) - Double(n) * p) <= 4 * (Double(n) * p * (1 - p)).squareRoot()
                }
                let held = kinds["{}"] ?? 0
                let answered = subscribers - held
                #expect(within4σ(held, of: subscribers, share: 0.2), "\(kinds)")
                #expect(within4σ(kinds["message"] ?? 0, of: answered, share: 0.25), "\(kinds)")
                #expect(within4σ(kinds["alternateProduct"] ?? 0, of: answered, share: 0.25), "\(kinds)")
                #expect(within4σ(kinds["promotionalOffer"] ?? 0, of: answered, share: 0.5), "\(kinds)")
                #expect(Set(kinds.keys) == ["{}", "message", "alternateProduct", "promotionalOffer"], "\(kinds)")

                // Sticky: the same decision again for each sample, the offer signed anew.
                for (kind, sample) in samples {
                    let again = try await CancelSheetRecords.decided(client, post: post) {
                        try Self.request(ca, originalTransactionId: sample.id, requestIdentifier: $0)
                    }
                    #expect((try Self.json(again.body).keys.first ?? "{}") == kind, "\(again)")
                    if kind == "promotionalOffer" { #expect(again.body != sample.body, "signed anew, with a new nonce") }
                    if kind != "promotionalOffer" { #expect(again.body == sample.body) }
                }
                let offer = try #require(samples["promotionalOffer"])
                let body = try #require(try Self.json(offer.body)["promotionalOffer"] as? [String: Any])
                #expect(body["messageIdentifier"] as? String == Self.offerMessageId)
                let jws = try #require(body["promotionalOfferSignatureV2"] as? String)
                let pem = setup.key.publicKey.pemRepresentation
                let claims = try await PythonCrossCheck.claimsWithPyJWT(jws, publicKeyPEM: pem).mapValues { "\($0)" }
                #expect(claims["transactionId"] == offer.id)
                #expect(claims["offerIdentifier"] == "SAVE50")
                #expect(claims["productId"] == Self.monthly)
                #expect(claims["bid"] == "GeniusParentingAI")
                #expect(claims["iss"] == CampaignTestSetup.issuerId)
                #expect(claims["nonce"].flatMap(UUID.init(uuidString:)) != nil)
                #expect(
                    try Self.json(try #require(samples["alternateProduct"]).body)["alternateProduct"] as? [String: String] == [
                        "messageIdentifier": Self.switchMessageId, "productId": "ca.geniusparentingai.basic.yearly",
                        "billingPlanType": "BILLED_UPFRONT",
                    ]
                )
                #expect(try #require(samples["message"]).body == #"{"message":{"messageIdentifier":"\#(Self.messageId)"}}"#)

                // The premium campaign signs V1; the signature verifies over Apple's payload with Python's cryptography.
                let premium = try await CancelSheetRecords.decided(client, post: post) {
                    try Self.request(ca, originalTransactionId: "3000000000999999", productId: Self.premium, requestIdentifier: $0)
                }
                let v1 = try #require(
                    (try Self.json(premium.body)["promotionalOffer"] as? [String: Any])?["promotionalOfferSignatureV1"] as? [String: Any]
                )
                #expect(
                    v1["productId"] as? String == Self.premium && v1["offerIdentifier"] as? String == "PREMIUM30"
                        && v1["keyId"] as? String == "TESTKEY001"
                )
                let premiumBody = premium.body
                try await AppleModelCheck.verifyV1(premiumBody, bundleId: "GeniusParentingAI", publicKeyPEM: pem)

                // Apple's own model reads every answer back unchanged.
                let bodies = samples.values.map(\.body) + [premium.body]
                #expect(try await AppleModelCheck.roundTrips(bodies) == bodies.count)

                // Recorded: one first decision per subscriber, the repeats pointing at theirs (a decision the budget
                // cut, too_late, was never shown and is not counted: the next request decided anew).
                let rows = try await client.query(
                    """
                    SELECT count(*) FILTER (WHERE repeat_of IS NULL)::bigint, count(*) FILTER (WHERE repeat_of IS NOT NULL)::bigint,
                           count(*) FILTER (WHERE outcome = 'held_out' AND repeat_of IS NULL)::bigint
                    FROM reclaim.cancel_sheet_decisions WHERE outcome <> 'too_late'
                    """,
                    logger: TestPostgres.logger
                )
                for try await (first, repeats, heldOut) in rows.decode((Int64, Int64, Int64).self) {
                    #expect(first == Int64(subscribers + 1) && repeats == Int64(samples.count) && heldOut == Int64(held))
                }
            }
        }
    }

    @Test("a paused campaign answers {} at once and records nothing; a shadow campaign records its answer and answers {}; no database answers {}")
    func killSwitchShadowOutage() async throws {
        let ca = try TestCertificateAuthority()
        let shadow = """
              - id: cancel-sheet-shadow
                app: GeniusParentingAI
                trigger: RETENTION_MESSAGING
                priority: 30
                shadow: true
                conditions: {products: [ca.geniusparentingai.shadow.monthly]}
                message: \(Self.messageId)
            """
        let setup = try CampaignTestSetup(ca: ca, settings: Self.campaigns(extra: shadow))
        defer { setup.remove() }
        try await withTestDatabase { client, url in
            try await client.withConnection(logger: TestPostgres.logger) {
                try await CampaignStore.sync(try setup.config.domainCampaigns(), connection: $0, logger: TestPostgres.logger)
            }
            try await Self.withServer(setup, database: client) { post in
                let premium = { try Self.request(ca, originalTransactionId: "3000000000888888", productId: Self.premium, requestIdentifier: $0) }
                let shown = { try await CancelSheetRecords.decided(client, post: post, request: premium).body }
                #expect(try await shown().contains("promotionalOfferSignatureV1"))
                let line = try await CampaignSwitchTasks.setPaused(
                    true,
                    campaignId: "cancel-sheet-premium",
                    reason: "wrong offer",
                    url: url,
                    logger: TestPostgres.logger
                )
                #expect(line.hasPrefix("paused cancel-sheet-premium"))
                let paused = try await post(try premium(UUID().uuidString))
                #expect(paused.0 == .ok && paused.1 == "{}", "\(paused)")
                #expect(try await CampaignSwitchTasks.paused(url: url, logger: TestPostgres.logger).first?.contains("wrong offer") == true)
                _ = try await CampaignSwitchTasks.setPaused(
                    false,
                    campaignId: "cancel-sheet-premium",
                    reason: nil,
                    url: url,
                    logger: TestPostgres.logger
                )
                #expect(try await shown().contains("promotionalOfferSignatureV1"))
                await #expect(throws: ConfigError.self) {
                    try await CampaignSwitchTasks.setPaused(true, campaignId: "no-such", reason: nil, url: url, logger: TestPostgres.logger)
                }

                let shadowed = try await CancelSheetRecords.decided(client, post: post) {
                    try Self.request(
                        ca,
                        originalTransactionId: "3000000000777777",
                        productId: "ca.geniusparentingai.shadow.monthly",
                        requestIdentifier: $0
                    )
                }
                #expect(shadowed.body == "{}", "\(shadowed)")
                let rows = try await client.query(
                    """
                    SELECT campaign_id, outcome, shadow, answer, coalesce(message_identifier, '') FROM reclaim.cancel_sheet_decisions
                    WHERE original_transaction_id IN ('3000000000888888', '3000000000777777') AND outcome <> 'too_late' ORDER BY decided_at
                    """,
                    logger: TestPostgres.logger
                )
                var recorded: [String] = []
                for try await (campaign, outcome, isShadow, answer, message) in rows.decode((String, String, Bool, String, String).self) {
                    recorded.append("\(campaign) \(outcome) \(isShadow) \(answer) \(message)")
                }
                // The premium subscriber: the first decision and one repeat after the resume; nothing while paused (a
                // decision the budget cut, too_late, was never shown and is left out).
                #expect(
                    recorded == [
                        "cancel-sheet-premium answered false promotional_offer \(Self.v1MessageId)",
                        "cancel-sheet-premium answered false promotional_offer \(Self.v1MessageId)",
                        "cancel-sheet-shadow answered true message \(Self.messageId)",
                    ],
                    "\(recorded)"
                )
            }
        }
        // A database that does not answer: {} within the budget, not an error.
        let client = PostgresClient(
            configuration: .init(
                host: "127.0.0.1",
                port: try LoopbackPort.free(),
                username: "reclaim",
                password: nil,
                database: "none",
                tls: .disable
            )
        )
        let dead = Database(client: client, deadlines: .init(acquire: .seconds(120), query: .seconds(120), transaction: .seconds(120)))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            // The default budget, 300 ms.
            try await Self.withServer(setup, database: dead, budgetMilliseconds: ReclaimConfig.Server().retentionBudgetMilliseconds) { post in
                let start = ContinuousClock.now
                let answer = try await post(try Self.request(ca, originalTransactionId: "3000000000666666"))
                #expect(answer.0 == .ok && answer.1 == "{}", "\(answer)")
                // The budget covers the whole answer; the margin is the test client's own round trip.
                let took = ContinuousClock.now - start
                #expect(took < .milliseconds(300 + 200), "answered {} in \(took): within the budget, not after the pool's 120 s acquire timeout")
            }
            group.cancelAll()
        }
    }
}

/// Apple's App Store Server Library for Python, on Reclaim's realtime answers.
enum AppleModelCheck {
    struct Failure: Error, CustomStringConvertible { let description: String }

    /// Each body structured into `RealtimeResponseBody` with the library's converter and unstructured again must equal
    /// the body as sent; returns how many did.
    static func roundTrips(_ bodies: [String]) async throws -> Int {
        let script = #"""
            import json, sys
            from appstoreserverlibrary.models.LibraryUtility import _get_cattrs_converter
            from appstoreserverlibrary.models.RealtimeResponseBody import RealtimeResponseBody
            converter = _get_cattrs_converter(RealtimeResponseBody)
            def strip(value):
                if isinstance(value, dict): return {k: strip(v) for k, v in value.items() if v is not None and not k.startswith("raw")}
                return value
            n = 0
            for body in json.load(sys.stdin):
                sent = json.loads(body)
                model = converter.structure(sent, RealtimeResponseBody)
                back = strip(json.loads(json.dumps(converter.unstructure(model), default=str)))
                assert back == sent, (back, sent)
                n += 1
            print("round-tripped", n)
            """#
        let run = try await Subprocess.run("/usr/bin/env", ["python3", "-c", script], input: try JSONEncoder().encode(bodies))
        guard run.status == 0, run.output.hasPrefix("round-tripped ") else {
            throw Failure(description: "Apple's model refused: \(run.output)\(run.errors)")
        }
        return Int(run.output.dropFirst("round-tripped ".count).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }

    /// Verifies a `promotionalOfferSignatureV1` with Python's `cryptography` over Apple's payload: bundle id, key id,
    /// product, offer, appAccountToken (lowercase, or empty), nonce (lowercase), timestamp, joined by U+2063.
    static func verifyV1(_ body: String, bundleId: String, publicKeyPEM: String) async throws {
        let script = #"""
            import base64, json, sys
            from cryptography.hazmat.primitives import hashes, serialization
            from cryptography.hazmat.primitives.asymmetric import ec
            body, bundle, pem = sys.argv[1], sys.argv[2], sys.argv[3]
            s = json.loads(body)["promotionalOffer"]["promotionalOfferSignatureV1"]
            payload = "\u2063".join([bundle, s["keyId"], s["productId"], s["offerIdentifier"], s.get("appAccountToken", ""), s["nonce"], str(s["timestamp"])])
            serialization.load_pem_public_key(pem.encode()).verify(base64.b64decode(s["encodedSignature"]), payload.encode(), ec.ECDSA(hashes.SHA256()))
            print("verified")
            """#
        let run = try await Subprocess.run("/usr/bin/env", ["python3", "-c", script, body, bundleId, publicKeyPEM])
        guard run.status == 0, run.output.hasPrefix("verified") else { throw Failure(description: "V1 refused: \(run.output)\(run.errors)") }
    }
}
