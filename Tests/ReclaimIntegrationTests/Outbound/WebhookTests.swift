import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import ReclaimDomain
import ReclaimStore
import ReclaimTestSupport
import Testing

@testable import ReclaimService

@Suite("Webhooks: Reclaim's own events, signed as Standard Webhooks", .poolWatchdog)
struct WebhookTests {
    let logger = TestPostgres.logger

    /// The Standard Webhooks check, written here from the spec and independently of Reclaim's Swift: for each
    /// secret, base64(HMAC-SHA256(base64-decoded secret, "{id}.{timestamp}.{body}")) must be one of the header's
    /// space-separated `v1,` signatures (compared in constant time), and the timestamp within 5 minutes of `now`.
    static let verifier = #"""
        import base64, hashlib, hmac, json, sys
        data = json.load(sys.stdin)
        tolerance = 300
        for message in data["messages"]:
            if abs(data["now"] - int(message["timestamp"])) > tolerance:
                print("too old", message["id"]); sys.exit(3)
            signed = (message["id"] + "." + message["timestamp"] + "." + message["body"]).encode()
            sent = [s.split(",", 1)[1] for s in message["signature"].split(" ") if s.startswith("v1,")]
            for secret in data["secrets"]:
                key = base64.b64decode(secret.removeprefix("whsec_"))
                expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
                if not any(hmac.compare_digest(expected, s) for s in sent):
                    print("bad signature", message["id"]); sys.exit(2)
        print("verified", len(data["messages"]))
        """#

    struct Message: Encodable {
        let id: String
        let timestamp: String
        let signature: String
        let body: String
    }

    static func python(_ messages: [Message], secrets: [String], now: Int) async throws -> (status: Int32, output: String) {
        struct Input: Encodable {
            let messages: [Message]
            let secrets: [String]
            let now: Int
        }
        let run = try await Subprocess.run(
            "/usr/bin/env",
            ["python3", "-c", verifier],
            input: try JSONEncoder().encode(Input(messages: messages, secrets: secrets, now: now))
        )
        return (run.status, run.output + run.errors)
    }

    @Test(
        "offers issued, withdrawn, delivered, redeemed, expired, a grant and a refused notification reach the receiver; signatures verify with both rotated secrets in Python; an old timestamp is refused; a retry keeps its webhook-id"
    )
    func eventsSignedAndRetried() async throws {
        let current = WebhookSecret.generateText()
        let previous = WebhookSecret.generateText()
        // The first request fails: its retry must carry the same webhook-id and body.
        let receiver = TestReceiver { number in number == 1 ? .status(503) : .ok }
        try await receiver.serve { port in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reclaim-webhooks-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            try current.write(to: directory.appendingPathComponent("current"), atomically: true, encoding: .utf8)
            try previous.write(to: directory.appendingPathComponent("previous"), atomically: true, encoding: .utf8)
            let setup = try CampaignTestSetup(
                settings: "forwarding: {allowPrivate: true}",
                appSettings: """
                        webhooks:
                          - url: http://127.0.0.1:\(port)/reclaim
                            secretFile: \(directory.path)/current
                            previousSecretFile: \(directory.path)/previous
                            events: [offer.issued, offer.delivered, offer.redeemed, offer.withdrawn, offer.expired, grant.created, notification.refused]
                    """
            )
            defer { setup.remove() }
            try await withTestDatabase { client, _ in
                let dependencies = try Dependencies.test(postgres: client, config: setup.config)
                try await client.transaction(logger: logger) {
                    try await OutboundStore.sync(dependencies.outboundTargets.map(\.row), connection: $0, logger: logger)
                }
                let sender = OutboundSender(
                    targets: dependencies.outboundTargets,
                    postgres: client,
                    concurrency: 4,
                    allowPrivate: true,
                    pollInterval: .milliseconds(200),
                    logger: logger
                )
                let corpus = try CorpusCampaignTests.corpusInSignedDateOrder()
                try await withServices([sender]) {
                    try await processNotifications(corpus.map(\.notification.body), client: client, dependencies: dependencies)
                    // The rest of an offer's life, and a grant, as any writer would make them: the triggers report each.
                    try await client.query(
                        "UPDATE reclaim.offers SET state = 'delivered', delivered_at = now() WHERE state = 'ready'",
                        logger: logger
                    )
                    try await client.query(
                        "UPDATE reclaim.offers SET state = 'redeemed', redeemed_at = now(), ended_at = now() WHERE state = 'delivered'",
                        logger: logger
                    )
                    try await client.query(
                        """
                        UPDATE reclaim.offers SET state = 'expired', end_reason = 'deliverable_until passed'
                        WHERE id = (SELECT id FROM reclaim.offers WHERE state = 'withdrawn' ORDER BY created_at LIMIT 1)
                        """,
                        logger: logger
                    )
                    try await client.query(
                        """
                        INSERT INTO reclaim.grants (id, bundle_id, idempotency_key, app_account_token, product_id, offer_identifier, reason, campaign)
                        VALUES (gen_random_uuid(), 'GeniusParentingAI', 'k1', gen_random_uuid(), 'ca.geniusparentingai.basic.monthly', 'RETAIN50', 'referral', 'referral-2026')
                        """,
                        logger: logger
                    )
                    // A forged notification naming the app: its signature no longer matches.
                    let forged = corpus[0].notification.signedPayload.dropLast(4) + "AAAA"
                    let app = Application(router: buildRouter(dependencies))
                    try await app.test(.router) { http in
                        try await http.execute(
                            uri: "/v1/apple/notifications",
                            method: .post,
                            headers: [.contentType: "application/json"],
                            body: ByteBuffer(string: #"{"signedPayload":"\#(forged)"}"#)
                        ) { #expect($0.status.code >= 400) }
                    }
                    try await eventually("every event type arrived", timeout: .seconds(60)) {
                        let types = Set(receiver.received.compactMap { Self.event($0.body)?["type"] as? String })
                        return types == Set(WebhookEvent.allCases.map(\.rawValue))
                    }
                }
                let received = receiver.received
                let events = received.compactMap { Self.event($0.body) }
                #expect(events.count == received.count, "every body is a JSON event")
                // The corpus issues 9 offers and withdraws 8 (CorpusCampaignTests); a retried message counts once.
                var unique: [String: [String: Any]] = [:]
                for request in received { unique[request.headers["webhook-id"] ?? ""] = Self.event(request.body) }
                let counts = Dictionary(grouping: unique.values, by: { $0["type"] as? String ?? "" }).mapValues(\.count)
                #expect(counts["offer.issued"] == 9)
                #expect(counts["offer.withdrawn"] == 8)
                for event in events {
                    #expect((event["timestamp"] as? String)?.hasSuffix("Z") == true)
                    let data = try #require(event["data"] as? [String: Any])
                    if (event["type"] as? String)?.hasPrefix("offer.") == true {
                        #expect(data["offerId"] is String)
                        #expect(data["bundleId"] as? String == "GeniusParentingAI")
                        #expect(data["storekit1Signature"] == nil && data["storekit2JWS"] == nil)
                    }
                }
                let refused = try #require(events.first { $0["type"] as? String == "notification.refused" })
                #expect((refused["data"] as? [String: Any])?["problem"] as? String == "invalid-signature")

                // The failed first request and its retry: same webhook-id, same body.
                let first = try #require(received.first { $0.number == 1 })
                let retry = try #require(received.first { $0.number > 1 && $0.headers["webhook-id"] == first.headers["webhook-id"] })
                #expect(retry.body == first.body)

                let messages = try received.map { request in
                    Message(
                        id: try #require(request.headers["webhook-id"]),
                        timestamp: try #require(request.headers["webhook-timestamp"]),
                        signature: try #require(request.headers["webhook-signature"]),
                        body: String(decoding: request.body, as: UTF8.self)
                    )
                }
                #expect(messages.allSatisfy { $0.id.hasPrefix("msg_") && $0.signature.split(separator: " ").count == 2 })
                let now = Int(Date().timeIntervalSince1970)
                // Both secrets of the rotation verify every message.
                let both = try await Self.python(messages, secrets: [current, previous], now: now)
                #expect(both.status == 0 && both.output.hasPrefix("verified \(messages.count)"), "\(both.output)")
                // A replay ten minutes later is refused by its timestamp.
                let replay = try await Self.python(messages, secrets: [current], now: now + 600)
                #expect(replay.status == 3, "\(replay.output)")
                // Another secret does not verify.
                let wrong = try await Self.python(messages, secrets: [WebhookSecret.generateText()], now: now)
                #expect(wrong.status == 2, "\(wrong.output)")
            }
        }
    }

    static func event(_ body: [UInt8]) -> [String: Any]? {
        try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
    }
}
