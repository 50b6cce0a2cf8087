import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import ReclaimDomain
import ReclaimStore
import ReclaimTestSupport
import Synchronization
import Testing

@testable import ReclaimService

/// Issue 74: a make-good is days added by Apple, not a discount to buy. `POST /v1/grants` with `"kind": "extension"`
/// is refused before Apple is asked when Reclaim knows the subscription ineligible, else sent once on a call lane,
/// its outcome recorded in Apple's words.
@Suite("Extension grants: Apple's renewal-date extension for one subscriber, sent once, its outcome recorded", .poolWatchdog)
struct ExtensionGrantTests {
    let logger = TestPostgres.logger
    typealias Setup = RecoveryTests.Setup

    static let day: TimeInterval = 86_400

    /// A stand-in Apple, a database with the app's subscriptions from `notifications`, an admin key, and the router.
    func withGrants(
        failures: [Int: AppleAPIStandIn.Failure] = [:],
        subscriptions: [Known],
        _ body: @Sendable (AppleAPIStandIn, Database, Dependencies, String, any TestClientProtocol) async throws -> Void
    ) async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let standIn = setup.standIn(failures: failures)
        let apple = Application(router: standIn.router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await apple.test(.live) { appleHTTP in
            let port = try #require(appleHTTP.port)
            try await withTestDatabase { client, _ in
                let dependencies = try Dependencies.test(postgres: client, config: try setup.config(port: port))
                let notifications = try subscriptions.map { try Self.subscription(setup, $0.id, expiresIn: $0.expiresIn, type: $0.type) }
                try await processNotifications(notifications, client: client, dependencies: dependencies)
                let adminKey = try await TestKeys(client: client).create(scope: .admin, bundleId: nil, logger: logger)
                let app = Application(router: buildRouter(dependencies), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
                try await app.test(.router) { http in try await body(standIn, client, dependencies, adminKey, http) }
            }
        }
    }

    /// A subscription Reclaim has heard of: its notification's type and its expiry, from now.
    struct Known: Sendable {
        let id: String
        let expiresIn: TimeInterval
        var type = "SUBSCRIBED"
    }

    /// A subscription of `id` that expires `expiresIn` from now (`type` SUBSCRIBED unless given).
    static func subscription(_ setup: Setup, _ id: String, expiresIn: TimeInterval, type: String = "SUBSCRIBED") throws -> Data {
        try RefundRequestTests.notification(
            setup,
            type: type,
            id: id,
            transaction: ["expiresDate": Int64(Date().addingTimeInterval(expiresIn).timeIntervalSince1970 * 1000)]
        )
    }

    static func extensionBody(_ id: String, days: Int = 7, reasonCode: Int = 3) -> [String: Any] {
        [
            "kind": "extension", "bundleId": "com.example.app", "originalTransactionId": id, "extendByDays": days, "extendReasonCode": reasonCode,
            "reason": "the outage of 2026-11-20",
        ]
    }

    static func post(
        _ body: [String: Any],
        key: String,
        idempotencyKey: String,
        http: any TestClientProtocol
    ) async throws -> (HTTPResponse.Status, [String: Any]) {
        try await http.execute(
            uri: "/v1/grants",
            method: .post,
            headers: [.contentType: "application/json", .authorization: "Bearer \(key)", .init("Idempotency-Key")!: idempotencyKey],
            body: ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: body))
        ) { response in
            (response.status, (try? JSONSerialization.jsonObject(with: Data(String(buffer: response.body).utf8)) as? [String: Any]) ?? [:])
        }
    }

    /// The call lanes (and a batch lane) until `done`.
    func runCalls(
        _ client: Database,
        _ dependencies: Dependencies,
        until what: String,
        _ done: @escaping @Sendable () async throws -> Bool
    ) async throws {
        let pool = WorkerPool(
            queue: JobQueue(postgres: client),
            handlers: jobHandlers(dependencies),
            options: .init(concurrency: 1, callConcurrency: 2, batchSize: 16, pollInterval: .milliseconds(50)),
            logger: logger
        )
        try await withServices([pool]) { try await eventually(what, timeout: .seconds(20), done) }
    }

    static func status(_ client: Database, _ key: String) async throws -> String? {
        let rows = try await client.query("SELECT status FROM reclaim.renewal_extensions WHERE idempotency_key = \(key)", logger: TestPostgres.logger)
        for try await status in rows.decode(String.self) { return status }
        return nil
    }

    @Test(
        "an active subscription is extended once: 202 pending, Apple's one call with the key as its requestIdentifier, then 200 with Apple's new date"
    )
    func extendsOnce() async throws {
        let expiresIn = 10 * Self.day
        try await withGrants(subscriptions: [Known(id: "9100000000000001", expiresIn: expiresIn)]) {
            standIn,
            client,
            dependencies,
            adminKey,
            http in
            let expires = Int64(Date().addingTimeInterval(expiresIn).timeIntervalSince1970 * 1000)
            standIn.accounts.add("9100000000000001", expiresDate: expires)
            let first = try await Self.post(Self.extensionBody("9100000000000001"), key: adminKey, idempotencyKey: "outage-1", http: http)
            #expect(first.0 == .accepted, "\(first)")
            let pending = try #require(first.1["extension"] as? [String: Any])
            #expect(pending["status"] as? String == "pending" && pending["requestIdentifier"] as? String == "outage-1", "\(first)")
            #expect((first.1["grant"] as? [String: Any])?["kind"] as? String == "extension")
            try await runCalls(client, dependencies, until: "Apple's answer recorded") { try await Self.status(client, "outage-1") == "extended" }

            let again = try await Self.post(Self.extensionBody("9100000000000001"), key: adminKey, idempotencyKey: "outage-1", http: http)
            #expect(again.0 == .ok, "\(again)")
            let extended = try #require(again.1["extension"] as? [String: Any])
            #expect(extended["status"] as? String == "extended", "\(again)")
            let effective = try #require((extended["effectiveDate"] as? String).flatMap { try? Date($0, strategy: .iso8601) })
            #expect(abs(effective.timeIntervalSince1970 * 1000 - Double(expires + 7 * 86_400_000)) < 1000, "\(again)")
            // The same key with another request is refused, and no second call goes to Apple.
            let reused = try await Self.post(Self.extensionBody("9100000000000001", days: 8), key: adminKey, idempotencyKey: "outage-1", http: http)
            #expect(reused.0 == .unprocessableContent && reused.1["type"] as? String == "urn:reclaim:problem:idempotency-key-reused", "\(reused)")
            // In the subscriber's story, with Apple's outcome.
            let story = try await client.withConnection(logger: logger) { connection in
                try await SubscriberStore.story(
                    SubscriberLookup(.originalTransactionId("9100000000000001")),
                    connection: connection,
                    logger: logger
                )
            }
            let told = try #require(story.subscriptions.first?.extensions.first)
            #expect(told.status == "extended" && told.extendByDays == 7 && told.effectiveDate != nil, "\(told)")
            let sent = standIn.accounts.bodies.withLock { $0 }.filter { $0.endpoint == "extendSubscriptionRenewalDate" }
            #expect(sent.count == 1, "\(sent)")
            let read = try await RenewalExtensionClientTests.throughApplesModels(sent.map { ["ExtendRenewalDateRequest", $0.body] })
            #expect(
                try RenewalExtensionClientTests.object(read[0])
                    == (["extendByDays": 7, "extendReasonCode": 3, "requestIdentifier": "outage-1"] as NSDictionary)
            )
        }
    }

    @Test("refused before Apple is asked when Reclaim knows better: expired, in billing retry, extended twice this year, unknown; bad input is 400")
    func refusedBeforeApple() async throws {
        try await withGrants(subscriptions: [
            Known(id: "9200000000000001", expiresIn: -Self.day, type: "EXPIRED"),
            Known(id: "9200000000000002", expiresIn: 10 * Self.day),
            Known(id: "9200000000000002", expiresIn: 13 * Self.day, type: "RENEWAL_EXTENDED"),
            Known(id: "9200000000000002", expiresIn: 16 * Self.day, type: "RENEWAL_EXTENDED"),
            Known(id: "9200000000000003", expiresIn: 10 * Self.day),
        ]) { standIn, _, _, adminKey, http in
            func refusal(_ body: [String: Any], _ key: String) async throws -> (HTTPResponse.Status, String) {
                let answer = try await Self.post(body, key: adminKey, idempotencyKey: key, http: http)
                return (answer.0, answer.1["detail"] as? String ?? "\(answer.1)")
            }
            let expired = try await refusal(Self.extensionBody("9200000000000001"), "k1")
            #expect(expired.0 == .unprocessableContent && expired.1.contains("expired"), "\(expired)")
            let twice = try await refusal(Self.extensionBody("9200000000000002"), "k2")
            #expect(twice.0 == .unprocessableContent && twice.1.contains("extended twice in the past 365 days"), "\(twice)")
            let unknown = try await refusal(Self.extensionBody("9299999999999999"), "k3")
            #expect(unknown.0 == .unprocessableContent && unknown.1.contains("no subscription"), "\(unknown)")
            let tooMany = try await refusal(Self.extensionBody("9200000000000002", days: 91), "k4")
            #expect(tooMany.0 == .badRequest && tooMany.1.contains("1 to 90"), "\(tooMany)")
            let reason = try await refusal(Self.extensionBody("9200000000000002", reasonCode: 4), "k5")
            #expect(reason.0 == .badRequest && reason.1.contains("extendReasonCode"), "\(reason)")
            let longKey = try await refusal(Self.extensionBody("9200000000000002"), String(repeating: "k", count: 129))
            #expect(longKey.0 == .badRequest && longKey.1.contains("128"), "\(longKey)")
            var kind = Self.extensionBody("9200000000000002")
            kind["kind"] = "refund"
            let badKind = try await refusal(kind, "k6")
            #expect(badKind.0 == .badRequest && badKind.1.contains("kind must be offer"), "\(badKind)")
            // Two grants not yet sent count as two: a third is refused, not left for Apple's 4030005.
            #expect(try await refusal(Self.extensionBody("9200000000000003", days: 1), "p1").0 == .accepted)
            #expect(try await refusal(Self.extensionBody("9200000000000003", days: 2), "p2").0 == .accepted)
            let third = try await refusal(Self.extensionBody("9200000000000003", days: 3), "p3")
            #expect(third.0 == .unprocessableContent && third.1.contains("extended twice in the past 365 days"), "\(third)")
            #expect(standIn.accounts.bodies.withLock { $0 }.isEmpty, "Apple was asked")
        }
    }

    @Test("Apple's refusal is recorded in its words; a 429 is waited out and sent once; a refused key leaves it pending, the error noted")
    func applesAnswersRecorded() async throws {
        // Request 1 (the first extension call) meets Apple's rate limit; request 4 (the third grant's) a refused key.
        try await withGrants(
            failures: [1: .rateLimited(retryAfter: .milliseconds(700)), 4: .unauthorized],
            subscriptions: ["9300000000000001", "9300000000000002", "9300000000000003"].map { Known(id: $0, expiresIn: 10 * Self.day) }
        ) { standIn, client, dependencies, adminKey, http in
            let expires = Int64(Date().addingTimeInterval(10 * Self.day).timeIntervalSince1970 * 1000)
            standIn.accounts.add("9300000000000001", expiresDate: expires)
            // Family-shared, which only Apple knows here.
            standIn.accounts.add("9300000000000002", expiresDate: expires, familyShared: true)
            standIn.accounts.add("9300000000000003", expiresDate: expires)
            #expect(try await Self.post(Self.extensionBody("9300000000000001"), key: adminKey, idempotencyKey: "a", http: http).0 == .accepted)
            try await runCalls(client, dependencies, until: "the first extended after Apple's 429") {
                try await Self.status(client, "a") == "extended"
            }
            #expect(try await Self.post(Self.extensionBody("9300000000000002"), key: adminKey, idempotencyKey: "b", http: http).0 == .accepted)
            try await runCalls(client, dependencies, until: "the family-shared one refused") { try await Self.status(client, "b") == "refused" }
            let refused = try await Self.post(Self.extensionBody("9300000000000002"), key: adminKey, idempotencyKey: "b", http: http)
            let recorded = try #require(refused.1["extension"] as? [String: Any])
            #expect((recorded["appleError"] as? String)?.contains("4030007 FamilySharedSubscriptionExtensionIneligibleError") == true, "\(refused)")
            #expect(try await Self.post(Self.extensionBody("9300000000000003"), key: adminKey, idempotencyKey: "c", http: http).0 == .accepted)
            try await runCalls(client, dependencies, until: "the refused key noted") {
                try await firstInt(client, "SELECT count(*)::int FROM reclaim.renewal_extensions WHERE idempotency_key = 'c' AND apple_status = 401")
                    == 1
            }
            #expect(try await Self.status(client, "c") == "pending")
            let calls = standIn.received.filter { $0.path.hasPrefix("/inApps/v1/subscriptions/extend/") }
            #expect(calls.count == 4, "429 then success, the family refusal, the 401: \(calls.map(\.path))")
        }
    }

    @Test("a subscriber forgotten before their extension is sent: it is never sent (it would name a pseudonym), and is recorded refused")
    func forgottenBeforeSending() async throws {
        try await withGrants(subscriptions: [Known(id: "9400000000000001", expiresIn: 10 * Self.day)]) {
            standIn,
            client,
            dependencies,
            adminKey,
            http in
            standIn.accounts.add("9400000000000001", expiresDate: Int64(Date().addingTimeInterval(10 * Self.day).timeIntervalSince1970 * 1000))
            #expect(try await Self.post(Self.extensionBody("9400000000000001"), key: adminKey, idempotencyKey: "f", http: http).0 == .accepted)
            _ = try await SubscriberErasure.forget(SubscriberLookup(.originalTransactionId("9400000000000001")), postgres: client, logger: logger)
            try await runCalls(client, dependencies, until: "the queue empty") {
                try await firstInt(client, "SELECT count(*)::int FROM reclaim.jobs WHERE kind = 'renewal_extension' AND state <> 'completed'") == 0
            }
            #expect(standIn.accounts.bodies.withLock { $0 }.isEmpty, "Apple was asked about a forgotten subscriber")
            let rows = try await client.query("SELECT status, apple_error FROM reclaim.renewal_extensions", logger: logger)
            for try await (status, error) in rows.decode((String, String?).self) {
                #expect(status == "refused" && error == "not sent: the subscriber was forgotten", "\(status) \(error ?? "")")
            }
        }
    }

    @Test("consent withdrawn (RESCIND_CONSENT) after the grant and before it is sent: never sent, recorded refused")
    func consentWithdrawnBeforeSending() async throws {
        try await withGrants(subscriptions: [Known(id: "9400000000000031", expiresIn: 10 * Self.day)]) {
            standIn,
            client,
            dependencies,
            adminKey,
            http in
            standIn.accounts.add("9400000000000031", expiresDate: Int64(Date().addingTimeInterval(10 * Self.day).timeIntervalSince1970 * 1000))
            #expect(try await Self.post(Self.extensionBody("9400000000000031"), key: adminKey, idempotencyKey: "c", http: http).0 == .accepted)
            // What the worker records for the account's subscriptions on a RESCIND_CONSENT (RescindConsentTests).
            try await client.query(
                "UPDATE reclaim.subscriptions SET consent_rescinded_at = now() WHERE original_transaction_id = '9400000000000031'",
                logger: logger
            )
            try await runCalls(client, dependencies, until: "the queue empty") {
                try await firstInt(client, "SELECT count(*)::int FROM reclaim.jobs WHERE kind = 'renewal_extension' AND state <> 'completed'") == 0
            }
            #expect(standIn.accounts.bodies.withLock { $0 }.isEmpty, "Apple was asked for a subscriber whose consent was withdrawn")
            let rows = try await client.query("SELECT status, apple_error FROM reclaim.renewal_extensions", logger: logger)
            for try await (status, error) in rows.decode((String, String?).self) {
                #expect(status == "refused" && (error ?? "").contains("RESCIND_CONSENT"), "\(status) \(error ?? "")")
            }
        }
    }
}
