import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import ReclaimDomain
import ReclaimStore
import ReclaimTestSupport
import Testing

@testable import ReclaimService

/// Issue 78: one stop for a whole app, and data-subject requests over HTTP.
@Suite("One stop per app, and data-subject requests over HTTP", .poolWatchdog)
struct AppStopTests {
    let logger = TestPostgres.logger
    static let token = "00000000-0000-0000-0000-000000000051"

    @Test(
        "stopped: no offers, the cancel sheet {}, grants 409 naming the stop, /readyz and the console say so, campaigns decide on; resumed: as before. Each within a second"
    )
    func stopAndResume() async throws {
        let ca = try TestCertificateAuthority()
        let setup = try CampaignTestSetup(ca: ca)
        defer { setup.remove() }
        @Sendable func cancelSheet() throws -> String {
            let jws = try ca.sign(
                RealtimeRequest(
                    originalTransactionId: "2000000970472825",
                    appAppleId: 6_747_332_178,
                    productId: "ca.geniusparentingai.basic.monthly",
                    userLocale: "en-US",
                    requestIdentifier: UUID().uuidString.lowercased(),
                    signedDate: Int64(Date().timeIntervalSince1970 * 1000),
                    environment: .sandbox
                )
            )
            return "{\"signedPayload\": \"\(jws)\"}"
        }
        try await withProcessedCorpus(setup) { client, dependencies in
            let keys = TestKeys(client: client)
            let admin = try await keys.create(scope: .admin, bundleId: nil, name: "ops", logger: logger)
            let appKey = try await keys.create(scope: .app, bundleId: "GeniusParentingAI", logger: logger)
            let app = Application(router: buildRouter(dependencies), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.live) { http in
                func offers() async throws -> [[String: Any]] {
                    let answer = try await http.execute(
                        uri: "/v1/offers?appAccountToken=\(Self.token)",
                        method: .get,
                        headers: [.authorization: "Bearer \(appKey)"]
                    ) { try JSONSerialization.jsonObject(with: Data(String(buffer: $0.body).utf8)) as? [String: Any] }
                    return try #require(answer?["offers"] as? [[String: Any]])
                }
                func sheet() async throws -> (HTTPResponse.Status, String) {
                    try await http.execute(
                        uri: "/v1/apple/retention-messaging",
                        method: .post,
                        headers: [.contentType: "application/json"],
                        body: ByteBuffer(string: try cancelSheet())
                    ) { ($0.status, String(buffer: $0.body)) }
                }
                func readyz() async throws -> String {
                    try await http.execute(uri: "/readyz", method: .get) { String(buffer: $0.body) }
                }
                #expect(try await GrantTests.grant(GrantTests.referral, key: admin, idempotencyKey: "before", http: http).0 == .created)
                #expect(try await offers().count == 1)
                let liveSheet = try await sheet()
                #expect(liveSheet.0 == .ok && liveSheet.1.contains("messageIdentifier"), "\(liveSheet)")
                #expect(try await !readyz().contains("stopped"))

                _ = try await client.withConnection(logger: logger) {
                    try await AppStopStore.stop(
                        bundleId: "GeniusParentingAI",
                        reason: "INC-142: wrong price",
                        by: "alice",
                        connection: $0,
                        logger: self.logger
                    )
                }
                // Every process reads the stops at most this long ago: the stop's promise.
                try await Task.sleep(for: AppStops.freshFor)
                #expect(try await offers().isEmpty, "a stopped app's subscriber has no offer")
                let refused = try await GrantTests.grant(GrantTests.referral, key: admin, idempotencyKey: "during", http: http)
                #expect(refused.0 == .conflict, "\(refused)")
                #expect(refused.1["type"] as? String == "urn:reclaim:problem:app-stopped")
                #expect((refused.1["detail"] as? String)?.contains("by alice: INC-142: wrong price") == true, "\(refused.1)")
                let stoppedSheet = try await sheet()
                #expect(stoppedSheet.0 == .ok && stoppedSheet.1 == "{}", "\(stoppedSheet)")
                #expect(try await readyz().contains("\"stopped\":\"GeniusParentingAI since "))
                #expect(try await firstInt(client, "SELECT cancel_sheet_answered_empty FROM reclaim.app_stops") == 1)

                _ = try await client.withConnection(logger: logger) {
                    try await AppStopStore.resume(bundleId: "GeniusParentingAI", by: "alice", connection: $0, logger: self.logger)
                }
                try await Task.sleep(for: AppStops.freshFor)
                #expect(try await offers().count == 1, "the offer the stop held back is handed out again")
                #expect(try await GrantTests.grant(GrantTests.referral, key: admin, idempotencyKey: "after", http: http).0 == .created)
                #expect(try await !readyz().contains("stopped"))
            }
        }
    }

    @Test("the story and the erasure over HTTP: the commands' JSON, by role and app; the erasure idempotent by key, dry run first; audited")
    func dataSubjectRequests() async throws {
        let setup = try CampaignTestSetup(extraApps: "  - {bundleId: com.example.other, environments: [Sandbox]}")
        defer { setup.remove() }
        let corpus = try CorpusCampaignTests.corpusInSignedDateOrder()
        try await withTestDatabase { client, url in
            let dependencies = try Dependencies.test(postgres: client, config: setup.config)
            try await processNotifications(corpus.map(\.notification.body), client: client, dependencies: dependencies)
            let keys = TestKeys(client: client)
            let privacy = try await keys.create(scope: .privacy, bundleId: nil, name: "dsr", logger: logger)
            let support = try await keys.create(scope: .support, bundleId: nil, name: "support", logger: logger)
            let otherPrivacy = try await keys.create(scope: .privacy, bundleId: "com.example.other", name: "other", logger: logger)
            let appKey = try await keys.create(scope: .app, bundleId: "GeniusParentingAI", logger: logger)
            let id = "2000000970472825"
            var environment = ProcessInfo.processInfo.environment
            environment["DATABASE_URL"] = url.connectionString
            let shown = try await Subprocess.run(
                try Binaries.path("reclaim"),
                ["subscribers", "show", "--original-transaction-id", id, "--json"],
                environment: environment
            )
            #expect(shown.status == 0, "\(shown.errors)")
            let app = Application(router: buildRouter(dependencies), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.live) { http in
                func story(_ key: String, _ query: String) async throws -> (HTTPResponse.Status, String) {
                    try await http.execute(uri: "/v1/subscribers/story?\(query)", method: .get, headers: [.authorization: "Bearer \(key)"]) {
                        ($0.status, String(buffer: $0.body))
                    }
                }
                func erase(_ key: String, _ body: String, idempotencyKey: String?) async throws -> (HTTPResponse.Status, [String: Any]) {
                    var headers: HTTPFields = [.authorization: "Bearer \(key)", .contentType: "application/json"]
                    if let idempotencyKey { headers[.init("Idempotency-Key")!] = idempotencyKey }
                    return try await http.execute(uri: "/v1/subscribers/erasure", method: .post, headers: headers, body: ByteBuffer(string: body)) {
                        ($0.status, (try? JSONSerialization.jsonObject(with: Data(String(buffer: $0.body).utf8)) as? [String: Any]) ?? [:])
                    }
                }
                // The story: the command's document, for privacy and support keys; none for a key of another app.
                let read = try await story(privacy, "originalTransactionId=\(id)")
                #expect(read.0 == .ok && read.1 == shown.output.trimmingCharacters(in: .newlines), "the same JSON as subscribers show --json")
                #expect(try await story(support, "originalTransactionId=\(id)").0 == .ok)
                #expect(try await story(otherPrivacy, "originalTransactionId=\(id)&app=GeniusParentingAI").0 == .forbidden)
                let limited = try await story(otherPrivacy, "originalTransactionId=\(id)")
                let limitedStory = try JSONSerialization.jsonObject(with: Data(limited.1.utf8)) as? [String: Any]
                #expect(limited.0 == .ok && (limitedStory?["subscriptions"] as? [Any])?.isEmpty == true, "another app's key reads none: \(limited.1)")
                #expect(try await story(appKey, "originalTransactionId=\(id)").0 == .forbidden)
                #expect(try await story(privacy, "originalTransactionId=12ab").0 == .badRequest)
                #expect(try await story(privacy, "appAccountToken=\(Self.token)&originalTransactionId=\(id)").0 == .badRequest)

                // The erasure: refused to support, previewed, done once per key, refused under the key for another body.
                let body = "{\"originalTransactionId\": \"\(id)\"}"
                #expect(try await erase(support, body, idempotencyKey: "e1").0 == .forbidden)
                #expect(try await erase(privacy, body, idempotencyKey: nil).0 == .badRequest, "an erasure needs an Idempotency-Key")
                #expect(try await erase(privacy, "{\"originalTransactionId\": \"\(id)\", \"extra\": 1}", idempotencyKey: "e0").0 == .badRequest)
                #expect(try await erase(privacy, "{\"originalTransactionId\": \"\(id)\", \"dryRun\": 1}", idempotencyKey: "e0").0 == .badRequest)
                let preview = try await erase(privacy, "{\"originalTransactionId\": \"\(id)\", \"dryRun\": true}", idempotencyKey: nil)
                #expect(preview.0 == .ok && preview.1["dryRun"] as? Bool == true && (preview.1["subscriptions"] as? Int ?? 0) >= 1, "\(preview)")
                let erased = try await erase(privacy, body, idempotencyKey: "e1")
                #expect(erased.0 == .ok && erased.1["dryRun"] as? Bool == false, "\(erased)")
                #expect((erased.1["matched"] as? [Any])?.isEmpty == false)
                let erasureId = try #require(erased.1["erasureId"] as? String)
                let again = try await erase(privacy, body, idempotencyKey: "e1")
                #expect(again.0 == .ok && again.1["erasureId"] as? String == erasureId && (again.1["matched"] as? [Any])?.isEmpty == true, "\(again)")
                #expect(again.1["subscriptions"] as? Int == erased.1["subscriptions"] as? Int)
                let other = try await erase(privacy, "{\"appAccountToken\": \"\(Self.token)\"}", idempotencyKey: "e1")
                #expect(other.0 == .unprocessableContent && other.1["type"] as? String == "urn:reclaim:problem:idempotency-key-reused")
                // Forgotten: the story says so; Reclaim keeps the request without the identifier.
                #expect(try await story(privacy, "originalTransactionId=\(id)").1.contains("forgottenAt"))
            }
            let kept = try await client.query("SELECT answer::text FROM reclaim.erasure_requests", logger: logger)
            for try await answer in kept.decode(String.self) { #expect(!answer.contains(id), "\(answer)") }
            let audited = try await client.withConnection(logger: logger) {
                try await AuditLog.list(AuditLog.Filter(), connection: $0, logger: self.logger)
            }
            #expect(audited.filter { $0.action == "subscriber.forget" && $0.outcome == "ok" && $0.actor == "privacy:dsr" }.count == 2)
            #expect(audited.contains { $0.action == "subscriber.forget" && $0.outcome == "refused" && $0.actor == "support:support" })
            #expect(audited.contains { $0.action == "subscriber.forget-preview" && $0.actor == "privacy:dsr" })
            #expect(audited.filter { $0.action == "subscriber.read" && $0.detail == "over HTTP" }.count >= 3)
        }
    }
}
