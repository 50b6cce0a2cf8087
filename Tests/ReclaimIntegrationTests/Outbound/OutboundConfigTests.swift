import Foundation
import PostgresNIO
import ReclaimDomain
import ReclaimStore
import ReclaimTestSupport
import Testing

@testable import ReclaimService

@Suite("Forwarding and webhook settings: mistakes refused at start-up with their config path", .poolWatchdog)
struct OutboundConfigTests {
    func problems(_ yaml: String) -> String {
        do {
            let config = try ReclaimConfig.parse(yaml: yaml, source: "test.yaml")
            _ = try config.outboundTargets()
            return "accepted"
        } catch {
            return "\(error)"
        }
    }

    static let app = """
        apps:
          - bundleId: com.example.app
            environments: [Sandbox]
        """

    @Test("a URL that is not http(s), a private address, localhost, a reserved header, an unknown event and a foreign environment")
    func refused() {
        let text = problems(
            Self.app + """

                    forwarding:
                      - {url: "ftp://backend.example.com/apple"}
                      - {url: "http://10.1.2.3/apple"}
                      - {url: "https://localhost:8443/apple", headers: {Content-Type: text/plain}}
                      - {url: "https://[::1]/apple", environments: [Production]}
                      - {url: "https://backend.example.com/apple", timeout: 10m}
                      - {url: "https://backend.example.com/apple"}
                    webhooks:
                      - {url: "http://192.168.1.9/hook", secretFile: /nonexistent, events: [offer.issued, offer.exploded]}
                """
        )
        for expected in [
            "apps[0].forwarding[0].url: ftp://backend.example.com/apple is not an http(s) URL",
            "apps[0].forwarding[1].url: 10.1.2.3 is a private address; set forwarding.allowPrivate: true",
            "apps[0].forwarding[2].url: localhost is this machine",
            "apps[0].forwarding[2].headers.Content-Type: Reclaim sets this header itself",
            "apps[0].forwarding[3].url: [::1] is this machine (loopback)",
            "apps[0].forwarding[3].environments: Production is not one of the app's environments",
            "apps[0].forwarding[4].timeout must be from 1s to 5m",
            "apps[0].forwarding[5].url: https://backend.example.com/apple is listed twice",
            "apps[0].webhooks[0].url: 192.168.1.9 is a private address",
            "apps[0].webhooks[0].events: unknown event offer.exploded",
        ] {
            #expect(text.contains(expected), "missing \(expected) in \(text)")
        }
    }

    @Test("a missing or malformed secret file stops start-up with its path; a public URL and a good secret load")
    func secrets() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reclaim-secrets-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let good = directory.appendingPathComponent("good")
        try WebhookSecret.generateText().write(to: good, atomically: true, encoding: .utf8)
        let bad = directory.appendingPathComponent("bad")
        try "not-a-secret".write(to: bad, atomically: true, encoding: .utf8)
        let short = directory.appendingPathComponent("short")
        try "whsec_\(Data(repeating: 7, count: 8).base64EncodedString())".write(to: short, atomically: true, encoding: .utf8)
        let text = problems(
            Self.app + """

                    webhooks:
                      - {url: "https://hooks.example.com/a", secretFile: \(directory.path)/missing}
                      - {url: "https://hooks.example.com/b", secretFile: \(bad.path)}
                      - {url: "https://hooks.example.com/c", secretFile: \(good.path), previousSecretFile: \(short.path)}
                """
        )
        #expect(text.contains("apps[0].webhooks[0].secretFile: cannot read \(directory.path)/missing"), "\(text)")
        #expect(text.contains("apps[0].webhooks[1].secretFile: \(bad.path): not a Standard Webhooks secret"), "\(text)")
        #expect(text.contains("apps[0].webhooks[2].previousSecretFile: \(short.path): the secret is 8 bytes"), "\(text)")
        #expect(!text.contains("not-a-secret"), "the file's text is never quoted")

        let config = try ReclaimConfig.parse(
            yaml: Self.app + """

                    forwarding:
                      - {url: "https://backend.example.com/apple?key=abc"}
                    webhooks:
                      - {url: "https://hooks.example.com/c", secretFile: \(good.path)}
                """
        )
        let targets = try config.outboundTargets()
        #expect(targets.map(\.row.kind) == ["forward", "webhook"])
        #expect(targets[0].row.environments == ["Sandbox"])
        #expect(targets[0].shownURL == "https://backend.example.com/apple")
        #expect(targets[1].row.events == WebhookEvent.defaults.map(\.rawValue))
        #expect(!targets[1].row.events.contains("notification.refused"))
    }

    @Test(
        "forwarding headerFiles: the value read from its file (newline dropped), never quoted; a missing file, two lines or a name also in headers refused"
    )
    func headerFiles() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reclaim-headers-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let token = directory.appendingPathComponent("authorization")
        try "Bearer s3cr3t-token\n".write(to: token, atomically: true, encoding: .utf8)
        let twoLines = directory.appendingPathComponent("two-lines")
        try "Bearer s3cr3t-one\nBearer s3cr3t-two\n".write(to: twoLines, atomically: true, encoding: .utf8)

        let config = try ReclaimConfig.parse(
            yaml: Self.app + """

                    forwarding:
                      - {url: "https://backend.example.com/apple", headers: {X-Source: reclaim}, headerFiles: {Authorization: \(token.path)}}
                """
        )
        let headers = try config.outboundTargets()[0].headers
        #expect(headers.map(\.name) == ["Authorization", "X-Source"])
        #expect(headers.first { $0.name == "Authorization" }?.value == "Bearer s3cr3t-token")

        let files = problems(
            Self.app + """

                    forwarding:
                      - {url: "https://backend.example.com/a", headerFiles: {Authorization: \(directory.path)/missing}}
                      - {url: "https://backend.example.com/b", headerFiles: {Authorization: \(twoLines.path)}}
                """
        )
        let names = problems(
            Self.app + """

                    forwarding:
                      - {url: "https://backend.example.com/a"}
                      - {url: "https://backend.example.com/b"}
                      - {url: "https://backend.example.com/c", headers: {authorization: x}, headerFiles: {Authorization: \(token.path), Host: \(token.path)}}
                """
        )
        let text = files + names
        #expect(text.contains("apps[0].forwarding[0].headerFiles.Authorization: cannot read \(directory.path)/missing"), "\(text)")
        #expect(text.contains("apps[0].forwarding[1].headerFiles.Authorization: \(twoLines.path) must hold one line"), "\(text)")
        #expect(text.contains("apps[0].forwarding[2].headerFiles.Authorization: also in headers"), "\(text)")
        #expect(text.contains("apps[0].forwarding[2].headerFiles.Host: Reclaim sets this header itself"), "\(text)")
        #expect(!text.contains("s3cr3t"), "a header file's value is never quoted: \(text)")
    }

    @Test("a paused target keeps its messages queued, none lost, and gets them all on resume")
    func pauseAndResume() async throws {
        let receiver = TestReceiver()
        try await receiver.serve { port in
            let url = "http://127.0.0.1:\(port)/apple"
            let target = OutboundStore.Target(kind: "forward", bundleId: "com.example.app", url: url, environments: ["Sandbox"], events: [])
            try await withTestDatabase { client, _ in
                let logger = TestPostgres.logger
                try await client.transaction(logger: logger) { try await OutboundStore.sync([target], connection: $0, logger: logger) }
                #expect(
                    try await client.withConnection(logger: logger) {
                        try await OutboundStore.setPaused(true, url: url, bundleId: nil, connection: $0, logger: logger)
                    } == [target.id]
                )
                let records = TestOutbound.records(20)
                try await client.withConnection(logger: logger) { connection in
                    _ = try await NotificationStore.insert(records, maxAttempts: 5, connection: connection, logger: logger)
                }
                let outbound = OutboundTarget(row: target, timeout: .seconds(5), headers: [], secrets: [])
                let sender = OutboundSender(
                    targets: [outbound],
                    postgres: client,
                    concurrency: 4,
                    allowPrivate: true,
                    pollInterval: .milliseconds(100),
                    logger: logger
                )
                try await withServices([sender]) {
                    try await Task.sleep(for: .seconds(1))
                    #expect(receiver.received.isEmpty, "a paused target was sent to")
                    _ = try await client.withConnection(logger: logger) {
                        try await OutboundStore.setPaused(false, url: url, bundleId: "com.example.app", connection: $0, logger: logger)
                    }
                    try await eventually("every queued notification arrives after resume", timeout: .seconds(30)) { receiver.received.count == 20 }
                }
                let bodies = Set(receiver.received.map { String(decoding: $0.body, as: UTF8.self) })
                #expect(bodies == Set((0..<20).map { #"{"signedPayload": "header.payload\#($0).signature"}"# }))
                #expect(receiver.received.allSatisfy { $0.headers["content-type"] == "application/json; charset=utf-8" })
                let status = try await client.withConnection(logger: logger) { try await OutboundStore.status(connection: $0, logger: logger) }
                #expect(status.count == 1 && status[0].queued == 0 && status[0].pausedAt == nil)
            }
        }
    }
}
