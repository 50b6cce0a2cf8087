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

@Suite("POST /v1/apple/notifications on a real PostgreSQL", .poolWatchdog)
struct NotificationIngestTests {
    let logger = TestPostgres.logger

    static let sandboxConfig = try! ReclaimConfig.parse(
        yaml: """
            apps:
              - bundleId: GeniusParentingAI
                appAppleId: 6747332178
                environments: [Sandbox]
              - bundleId: com.example.app
                appAppleId: 1234567890
                environments: [Sandbox, Production]
            """
    )

    func post(_ http: some TestClientProtocol, _ body: Data, contentType: String = "application/json") async throws -> (HTTPResponse.Status, String) {
        try await http.execute(
            uri: "/v1/apple/notifications",
            method: .post,
            headers: [.contentType: contentType],
            body: ByteBuffer(bytes: body)
        ) { ($0.status, String(buffer: $0.body)) }
    }

    func count(_ client: Database, _ table: String) async throws -> Int {
        let rows = try await client.query(PostgresQuery(unsafeSQL: "SELECT count(*)::bigint FROM \(table)"), logger: logger)
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }

    @Test("all 116 real sandbox notifications verify and are stored once each, with a job, even when posted twice")
    func realCorpus() async throws {
        let notifications = try AppleSandboxFixtures.all()
        #expect(notifications.count == 116)
        try await withTestDatabase { client, _ in
            let app = Application(router: buildRouter(try .test(postgres: client, config: Self.sandboxConfig)))
            try await app.test(.router) { http in
                for notification in notifications {
                    let first = try await post(http, notification.body)
                    #expect(first.0 == .ok, "\(notification.name): \(first.1)")
                    #expect(first.1.contains("\"stored\""), "\(notification.name): \(first.1)")
                }
                for notification in notifications {
                    let again = try await post(http, notification.body)
                    #expect(again.0 == .ok)
                    #expect(again.1.contains("\"duplicate\""), "\(notification.name): \(again.1)")
                }
            }
            #expect(try await count(client, "reclaim.notifications") == 116)
            #expect(try await count(client, "reclaim.jobs WHERE kind = 'process_notification'") == 116)
            let rows = try await client.query(
                """
                SELECT count(*)::bigint FROM reclaim.notifications
                WHERE bundle_id = 'GeniusParentingAI' AND environment = 'Sandbox'
                  AND (notification_type = 'TEST' OR original_transaction_id IS NOT NULL)
                """,
                logger: logger
            )
            for try await sane in rows.decode(Int64.self) { #expect(sane == 116) }
            let subscriber = try await client.query(
                "SELECT count(*)::bigint FROM reclaim.notifications WHERE original_transaction_id = '2000000970472825' AND app_account_token IS NOT NULL",
                logger: logger
            )
            for try await history in subscriber.decode(Int64.self) { #expect(history == 110) }
        }
    }

    @Test("concurrent posts of distinct and duplicate notifications: each stored exactly once")
    func concurrentGroupCommit() async throws {
        let ca = try TestCertificateAuthority()
        let maker = TestNotifications(ca: ca)
        try await withTestDatabase { client, _ in
            let verifier = AppleJWSVerifier(trustedRoots: [ca.root])
            let app = Application(router: buildRouter(try .test(postgres: client, config: Self.sandboxConfig, verifier: verifier)))
            let bodies = try (0..<100).map { _ in try maker.body() }
            try await app.test(.router) { http in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for body in bodies + bodies {
                        group.addTask {
                            let (status, text) = try await post(http, body)
                            #expect(status == .ok, "\(text)")
                        }
                    }
                    try await group.waitForAll()
                }
            }
            #expect(try await count(client, "reclaim.notifications") == 100)
            #expect(try await count(client, "reclaim.jobs") == 100)
        }
    }

    @Test("refusals carry a problem+json type and are recorded with the body's SHA-256")
    func refusals() async throws {
        let ca = try TestCertificateAuthority()
        let trusted = TestNotifications(ca: ca)
        let impostor = TestNotifications(ca: try TestCertificateAuthority())  // copies Apple's root subject, not trusted
        let real = try AppleSandboxFixtures.first("DID_RENEW").signedPayload
        func body(_ jws: String) -> Data { Data("{\"signedPayload\":\"\(jws)\"}".utf8) }
        func flip(_ jws: String, segment: Int) -> String {
            var parts = jws.split(separator: ".").map(String.init)
            var chars = Array(parts[segment])
            let index = chars.count / 2
            chars[index] = chars[index] == "A" ? "B" : "A"
            parts[segment] = String(chars)
            return parts.joined(separator: ".")
        }
        let payloadJSON = try #require(Base64URL.decode(real.split(separator: ".")[1]))
        let noneJWS = Base64URL.encode(Data("{\"alg\":\"none\"}".utf8)) + "." + Base64URL.encode(payloadJSON) + ".AAAA"
        let hsJWS = try ca.sign(payload: payloadJSON, header: ["alg": "HS256"])

        var wrongBundle = trusted
        wrongBundle.bundleId = "com.unknown.app"
        var wrongEnvironment = TestNotifications(ca: ca, bundleId: "GeniusParentingAI", environment: "Production", appAppleId: 6_747_332_178)
        wrongEnvironment.environment = "Production"
        var wrongAppleId = trusted
        wrongAppleId.environment = "Production"
        wrongAppleId.appAppleId = 999

        let cases: [(String, Data, String, HTTPResponse.Status, String)] = [
            ("header byte flipped", body(flip(real, segment: 0)), "application/json", .badRequest, "malformed-jws"),
            ("payload byte flipped", body(flip(real, segment: 1)), "application/json", .unauthorized, "invalid-signature"),
            ("signature byte flipped", body(flip(real, segment: 2)), "application/json", .unauthorized, "invalid-signature"),
            ("self-made CA named like Apple's", try impostor.body(), "application/json", .unauthorized, "untrusted-certificate-chain"),
            ("alg none", body(noneJWS), "application/json", .unauthorized, "unsupported-algorithm"),
            ("alg HS256", body(hsJWS), "application/json", .unauthorized, "unsupported-algorithm"),
            ("unknown bundle id", try wrongBundle.body(), "application/json", .forbidden, "unknown-app"),
            ("environment not accepted", try wrongEnvironment.body(), "application/json", .unprocessableContent, "environment-not-accepted"),
            ("Production with the wrong appAppleId", try wrongAppleId.body(), "application/json", .forbidden, "wrong-app-apple-id"),
            ("truncated body", Data(try trusted.body().prefix(100)), "application/json", .badRequest, "malformed-body"),
            ("not JSON", Data("signedPayload=abc".utf8), "application/json", .badRequest, "malformed-body"),
            ("JSON without signedPayload", Data("{\"payload\":\"x\"}".utf8), "application/json", .badRequest, "malformed-body"),
            ("wrong content type", try trusted.body(), "text/plain", .unsupportedMediaType, "unsupported-media-type"),
            ("5 MiB body", Data(repeating: 0x20, count: 5 * 1024 * 1024), "application/json", .contentTooLarge, "body-too-large"),
        ]
        try await withTestDatabase { client, _ in
            let verifier = AppleJWSVerifier(trustedRoots: [AppleJWSVerifier.appleRootCAG3, ca.root])
            let app = Application(router: buildRouter(try .test(postgres: client, config: Self.sandboxConfig, verifier: verifier)))
            try await app.test(.router) { http in
                for (name, body, contentType, status, slug) in cases {
                    let (got, text) = try await post(http, body, contentType: contentType)
                    #expect(got == status, "\(name): \(text)")
                    #expect(text.contains("\"type\":\"urn:reclaim:problem:\(slug)\""), "\(name): \(text)")
                }
                // And a good one still goes through.
                let (status, _) = try await post(http, try trusted.body())
                #expect(status == .ok)
            }
            #expect(try await count(client, "reclaim.notifications") == 1)
            // Recorded in the background (RejectionRecorder), so the answer does not wait for the database.
            try await eventually("every refusal recorded") { try await count(client, "reclaim.rejected_inputs") == cases.count }
            let hashed = try await client.query(
                "SELECT count(*)::bigint FROM reclaim.rejected_inputs WHERE problem = 'invalid-signature' AND length(body_sha256) = 32 AND body_size > 0",
                logger: logger
            )
            for try await rows in hashed.decode(Int64.self) { #expect(rows == 2) }
        }
    }

    @Test("worker.maxAttempts from the config reaches the queued job")
    func maxAttemptsReachesTheJob() async throws {
        let ca = try TestCertificateAuthority()
        let config = try ReclaimConfig.parse(
            yaml: """
                apps: [{bundleId: com.example.app, appAppleId: 1234567890, environments: [Sandbox]}]
                worker: {maxAttempts: 3}
                """
        )
        try await withTestDatabase { client, _ in
            let dependencies = try Dependencies.test(postgres: client, config: config, verifier: AppleJWSVerifier(trustedRoots: [ca.root]))
            let app = Application(router: buildRouter(dependencies))
            try await app.test(.router) { http in
                let (status, _) = try await post(http, try TestNotifications(ca: ca).body())
                #expect(status == .ok)
            }
            let rows = try await client.query("SELECT max_attempts FROM reclaim.jobs", logger: logger)
            for try await maxAttempts in rows.decode(Int.self) { #expect(maxAttempts == 3) }
        }
    }
}
