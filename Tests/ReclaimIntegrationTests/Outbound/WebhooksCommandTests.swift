import Foundation
import PostgresNIO
import ReclaimDomain
import ReclaimStore
import ReclaimTestSupport
import Testing

@Suite("reclaim webhooks: test, list, pause, resume, new-secret", .poolWatchdog)
struct WebhooksCommandTests {
    @Test("test sends a webhook.test the Python check verifies; list, pause and resume act on the configured target")
    func commands() async throws {
        let reclaim = try Binaries.path("reclaim")
        let secret = try await runProcess(reclaim, ["webhooks", "new-secret"]).output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(secret.hasPrefix("whsec_"))
        #expect(throws: Never.self) { try WebhookSecret(text: secret) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reclaim-webhooks-cli-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let secretFile = directory.appendingPathComponent("secret")
        try secret.write(to: secretFile, atomically: true, encoding: .utf8)

        let receiver = TestReceiver()
        try await receiver.serve { port in
            let url = "http://127.0.0.1:\(port)/hook"
            let sent = try await runProcess(reclaim, ["webhooks", "test", url, "--secret-file", secretFile.path])
            #expect(sent.status == 0, "\(sent.output)\(sent.errors)")
            #expect(sent.output.hasPrefix("HTTP 200"))
            let request = try #require(receiver.received.first)
            #expect(WebhookTests.event(request.body)?["type"] as? String == WebhookEvent.testType)
            let message = WebhookTests.Message(
                id: try #require(request.headers["webhook-id"]),
                timestamp: try #require(request.headers["webhook-timestamp"]),
                signature: try #require(request.headers["webhook-signature"]),
                body: String(decoding: request.body, as: UTF8.self)
            )
            let checked = try await WebhookTests.python([message], secrets: [secret], now: Int(Date().timeIntervalSince1970))
            #expect(checked.status == 0, "\(checked.output)")
            // Nothing listens here: a clear failure, exit 1.
            let refused = try await runProcess(reclaim, ["webhooks", "test", "http://127.0.0.1:1/hook", "--secret-file", secretFile.path])
            #expect(refused.status != 0)

            try await withTestDatabase { client, databaseURL in
                let target = OutboundStore.Target(
                    kind: "webhook",
                    bundleId: "com.example.app",
                    url: url + "?token=t0ps3cret",
                    environments: ["Sandbox"],
                    events: ["offer.issued"]
                )
                try await client.transaction(logger: TestPostgres.logger) {
                    try await OutboundStore.sync([target], connection: $0, logger: TestPostgres.logger)
                }
                let database = ["--database-url", databaseURL.connectionString]
                let paused = try await runProcess(reclaim, ["webhooks", "pause", target.url] + database)
                #expect(paused.status == 0 && paused.output.contains("paused webhook com.example.app \(url)"), "\(paused.output)\(paused.errors)")
                let list = try await runProcess(reclaim, ["webhooks", "list"] + database)
                #expect(list.output.contains("webhook\tcom.example.app\t\(url)\tpaused since"), "\(list.output)")
                #expect(!list.output.contains("t0ps3cret"), "the URL's query is never shown")
                let resumed = try await runProcess(reclaim, ["webhooks", "resume", target.url, "--app", "com.example.app"] + database)
                #expect(resumed.status == 0)
                #expect(try await runProcess(reclaim, ["webhooks", "list"] + database).output.contains("\tsending\t"))
                let unknown = try await runProcess(reclaim, ["webhooks", "pause", "https://nowhere.example.com/"] + database)
                #expect(unknown.status != 0 && unknown.errors.contains("no configured target has that URL"))
            }
        }
    }
}
