import Foundation
import ReclaimDomain
import ReclaimStore
import ReclaimTestSupport
import Testing

@Suite("No secret in any log line at any level", .poolWatchdog)
struct LogSecretsTests {
    @Test(
        "LOG_LEVEL=trace with a password in DATABASE_URL, a forwarding header and a query token: none of them, nor the signing key, is in the log"
    )
    func traceLogHoldsNoSecret() async throws {
        let receiver = TestReceiver()
        try await receiver.serve { port in
            let setup = try CampaignTestSetup(
                settings: ForwardingTests.smallServer + "\nforwarding: {allowPrivate: true}",
                appSettings: """
                        forwarding:
                          - {url: "http://127.0.0.1:\(port)/apple?token=query-secret-7f3a", headers: {Authorization: "Bearer header-secret-91c2"}}
                    """
            )
            defer { setup.remove() }
            try await withTestDatabase { _, url in
                // The test cluster trusts loopback, so any password connects: what matters is where it is written.
                var components = try #require(URLComponents(string: url.connectionString))
                components.password = "database-secret-5d1e"
                let databaseURL = try #require(components.string)
                let log = setup.directory.appendingPathComponent("server.log")
                let server = try ServerProcess(role: "all", config: setup.configFile, databaseURL: databaseURL, log: log, logLevel: "trace")
                try server.start()
                defer { server.stopInBackground() }
                try await server.waitUntilUp()
                let notification = try #require(try ForwardingTests.corpus().first)
                _ = try await ForwardingTests.post(notification.body, port: server.port)
                try await eventually("the forward arrives", timeout: .seconds(60)) { !receiver.received.isEmpty }
                #expect(receiver.received.first?.headers["authorization"] == "Bearer header-secret-91c2", "the header is sent")
                await server.stop()
                let text = try String(contentsOf: log, encoding: .utf8)
                #expect(text.contains("trace") || text.contains("debug"), "the log is not at trace level: \(text.prefix(2000))")
                let keyBody = setup.key.pkcs8PEM.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
                for secret in ["database-secret-5d1e", "header-secret-91c2", "query-secret-7f3a", String(keyBody.prefix(40))] {
                    let lines = text.split(separator: "\n").filter { $0.contains(secret) }
                    let clean = lines.isEmpty
                    #expect(clean, "\(secret) is in the log: \(lines.count) lines, the first: \(lines.first.map { String($0.prefix(300)) } ?? ""))")
                }
            }
        }
    }
}
