import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import PostgresNIO
import ReclaimDomain
import ReclaimStore
import ReclaimTestSupport
import Synchronization
import Testing

@testable import ReclaimService

@Suite("Outbound targets: private addresses judged as the socket sees them, each target isolated, each send bounded", .poolWatchdog)
struct OutboundAddressTests {
    let logger = TestPostgres.logger

    func problem(_ url: String) -> String? { OutboundURL.problem(url, allowPrivate: false) }

    @Test("every spelling of a private address that the resolver accepts is refused: decimal, hexadecimal, octal, short, mapped, NAT64, 6to4")
    func spellings() {
        for url in [
            "http://127.1:8080/", "http://2130706433:8080/", "http://0x7f000001:8080/", "http://0:8080/", "http://017700000001/",
            "http://0x7f.1/", "http://127.0.0.1/", "http://[::ffff:127.0.0.1]/", "http://[::ffff:7f00:1]/", "http://[::1]/", "http://[::]/",
            "http://2852039166/latest/meta-data", "http://0xa9fea9fe/", "http://169.254.169.254/", "http://0251.0376.0251.0376/",
            "http://[64:ff9b::a9fe:a9fe]/", "http://[2002:7f00:1::]/", "http://167772161/", "http://10.1/", "http://0xc0a80001/",
            "http://[fd00::1]/", "http://[fe80::1]/", "http://100.64.0.1/", "http://LOCALHOST./", "http://api.localhost/",
        ] {
            #expect(problem(url)?.contains("set forwarding.allowPrivate: true") == true, "\(url) was accepted")
        }
        #expect(problem("http://2852039166/")?.contains("(169.254.169.254) is a link-local address") == true)
        for url in [
            "https://8.8.8.8/", "http://134744072/", "https://[2001:4860:4860::8888]/", "https://[64:ff9b::808:808]/", "https://hooks.example.com/x",
        ] {
            #expect(problem(url) == nil, "\(url): \(problem(url) ?? "")")
        }
        #expect(OutboundURL.problem("http://127.1:8080/", allowPrivate: true) == nil)
    }

    @Test("campaigns check and serve refuse a spelled-out private target at start-up with its config path")
    func configRefusesSpellings() throws {
        let yaml = """
            apps:
              - bundleId: com.example.app
                environments: [Sandbox]
                forwarding:
                  - {url: "http://0x7f000001:9/apple"}
                webhooks:
                  - {url: "http://2852039166/hook", secretFile: /nonexistent}
            """
        let text = "\(#expect(throws: ConfigError.self) { try ReclaimConfig.parse(yaml: yaml, source: "test.yaml") }!)"
        #expect(text.contains("apps[0].forwarding[0].url: 0x7f000001 (127.0.0.1) is this machine (loopback)"), "\(text)")
        #expect(text.contains("apps[0].webhooks[0].url: 2852039166 (169.254.169.254) is a link-local address"), "\(text)")
    }

    @Test("ports outside 1…65535, header values with control characters, duplicates in another spelling and empty environments are refused")
    func probeFindings() throws {
        // Found by the probe: port 65536 crashed the server at the first send (and after every restart); a port past
        // Int's range was read as none and the request went to port 80; DEL in a header value made every send fail
        // with the value quoted in the error; the same receiver spelled twice got everything twice.
        for url in ["http://127.0.0.1:65536/a", "http://127.0.0.1:4294967297/a", "http://127.0.0.1:99999999999999999999/a", "http://h.example:0/"] {
            #expect(OutboundURL.problem(url, allowPrivate: true)?.contains("is not 1 to 65535") == true, "\(url)")
        }
        #expect(OutboundURL.problem("https://[2001:db8::1]:8443/a", allowPrivate: true) == nil)
        #expect(OutboundURL.problem("http://127%2E0.0.1/a", allowPrivate: true) == "a host is written without percent-encoding")
        #expect(OutboundURL.problem("https://hooks.example.com:443/a", allowPrivate: true) == nil)
        let yaml = """
            apps:
              - bundleId: com.example.app
                environments: [Sandbox]
                forwarding:
                  - {url: "https://receiver.example.com", headers: {Authorization: "Bearer TOKEN-123\\x7f"}}
                  - {url: "HTTPS://Receiver.Example.com:443/"}
                  - {url: "https://other.example.com/a", environments: []}
            """
        let text = "\(#expect(throws: ConfigError.self) { try ReclaimConfig.parse(yaml: yaml, source: "test.yaml") }!)"
        #expect(text.contains("forwarding[0].headers.Authorization: a header value holds only visible characters"), "\(text)")
        #expect(!text.contains("TOKEN-123"), "the value is never quoted: \(text)")
        #expect(text.contains("forwarding[1].url: ") && text.contains(" is listed twice"), "\(text)")
        #expect(text.contains("forwarding[2].environments: list at least one"), "\(text)")
    }

    @Test("a NUL anywhere in the config is refused with its path (a NUL in a campaign id kept the server from ever being ready)")
    func nulInConfig() {
        let yaml = "apps:\n  - {bundleId: com.example.app, environments: [Sandbox]}\ncampaigns:\n  - {id: \"a\\0b\", app: com.example.app}\n"
        let text = "\(#expect(throws: ConfigError.self) { try ReclaimConfig.parse(yaml: yaml, source: "test.yaml") }!)"
        #expect(text.contains("campaigns[0].id: holds the character U+0000 (NUL), which cannot be stored"), "\(text)")
    }

    @Test("campaigns check reads the webhook secrets and resolves the targets' names as serve does")
    func campaignsCheckLikeServe() async throws {
        let name = ProcessInfo.processInfo.hostName
        let own = try ReclaimConfig.parse(
            yaml: "apps:\n  - bundleId: com.example.app\n    environments: [Sandbox]\n    forwarding: [{url: \"http://\(name):9/x\"}]\n"
        )
        await #expect(throws: ConfigError.self) { try await CampaignTasks.check(own) }
        let secretless = try ReclaimConfig.parse(
            yaml:
                "apps:\n  - bundleId: com.example.app\n    environments: [Sandbox]\n    webhooks: [{url: \"https://h.invalid/x\", secretFile: /nonexistent}]\n"
        )
        await #expect(throws: ConfigError.self) { try await CampaignTasks.check(secretless) }
        let unresolved = try ReclaimConfig.parse(
            yaml: "apps:\n  - bundleId: com.example.app\n    environments: [Sandbox]\n    forwarding: [{url: \"https://h.invalid/x\"}]\n"
        )
        #expect(try await CampaignTasks.check(unresolved).contains("warning: https://h.invalid/x: h.invalid does not resolve here"))
    }

    @Test("a name is judged by what it resolves to: this machine's own name is refused; no answer refuses the send, not the server")
    func namesResolved() async throws {
        // This machine's name resolves to a loopback or private address here (/etc/hosts), yet passes the text check.
        let name = ProcessInfo.processInfo.hostName
        let addresses = await AddressPolicy.resolve(name)
        try #require(!addresses.isEmpty && addresses.allSatisfy { AddressPolicy.refusal($0) != nil }, "\(name) resolves to \(addresses)")
        #expect(problem("http://\(name):8080/") == nil, "the text alone does not tell")
        let own = TargetConnection(host: name, timeout: .seconds(2), concurrency: 1, allowPrivate: false)
        let refused = try #require(await own.check())
        #expect(refused.isPrivateAnswer && refused.description.contains("\(name) resolves to"), "\(refused)")
        let nowhere = TargetConnection(host: "reclaim-test.invalid", timeout: .seconds(2), concurrency: 1, allowPrivate: false)
        let unresolved = try #require(await nowhere.check())
        #expect(!unresolved.isPrivateAnswer && unresolved.description == "reclaim-test.invalid does not resolve", "\(unresolved)")
        await own.shutdown()
        await nowhere.shutdown()
    }

    @Test("the connection goes to the address that was checked, and a later private answer refuses the sends")
    func pinnedToCheckedAddress() async throws {
        let receiver = TestReceiver()
        // The resolver of this test: `.invalid` never resolves for the system, so a request that arrives went to
        // the checked address. 127.0.0.1 stands for a public answer, 127.0.0.2 for a private one.
        let answer = Mutex<[AddressPolicy.Address]>([[127, 0, 0, 1]])
        try await receiver.serve { port in
            let connection = TargetConnection(
                host: "receiver.invalid",
                timeout: .seconds(5),
                concurrency: 2,
                allowPrivate: false,
                recheckAfter: .zero,
                resolve: { _ in answer.withLock { $0 } },
                judge: { $0 == [127, 0, 0, 2] ? "a private address" : nil }
            )
            var request = HTTPClientRequest(url: "http://receiver.invalid:\(port)/apple")
            request.method = .POST
            let status = try await connection.withClient { try await OutboundSender.exchange(request, http: $0, timeout: .seconds(5)) }
            #expect(status == 200)
            #expect(receiver.received.count == 1)
            answer.withLock { $0 = [[127, 0, 0, 1], [127, 0, 0, 2]] }
            await #expect(throws: TargetConnection.Refused.self) {
                try await connection.withClient { try await OutboundSender.exchange(request, http: $0, timeout: .seconds(5)) }
            }
            // The resolver fails for a while: the address checked last is kept.
            answer.withLock { $0 = [[127, 0, 0, 1]] }
            _ = try await connection.withClient { try await OutboundSender.exchange(request, http: $0, timeout: .seconds(5)) }
            answer.withLock { $0 = [] }
            _ = try await connection.withClient { try await OutboundSender.exchange(request, http: $0, timeout: .seconds(5)) }
            #expect(receiver.received.count == 3)
            await connection.shutdown()
        }
    }

    /// Runs a sender for `targets` (forwards on the receiver at `port`) over `count` stored notifications.
    func withSender(
        _ targets: [(path: String, timeout: Duration)],
        port: Int,
        notifications count: Int,
        concurrency: Int = 8,
        _ body: @Sendable (Database) async throws -> Void
    ) async throws {
        try await withTestDatabase { client, _ in
            let rows = targets.map {
                OutboundStore.Target(
                    kind: "forward",
                    bundleId: "com.example.app",
                    url: "http://127.0.0.1:\(port)\($0.path)",
                    environments: ["Sandbox"],
                    events: []
                )
            }
            try await client.transaction(logger: logger) { try await OutboundStore.sync(rows, connection: $0, logger: logger) }
            try await client.withConnection(logger: logger) {
                _ = try await NotificationStore.insert(TestOutbound.records(count), maxAttempts: 5, connection: $0, logger: logger)
            }
            let outbound = zip(rows, targets).map { OutboundTarget(row: $0, timeout: $1.timeout, headers: [], secrets: []) }
            let sender = OutboundSender(
                targets: outbound,
                postgres: client,
                concurrency: concurrency,
                allowPrivate: true,
                pollInterval: .milliseconds(100),
                logger: logger
            )
            try await withServices([sender]) { try await body(client) }
        }
    }

    @Test("a target that never answers holds only its own sends, even on the host and port of a healthy one")
    func hangingTargetIsolated() async throws {
        let receiver = TestReceiver(byPath: { $0 == "/hang" ? .hang(.seconds(40)) : nil })
        try await receiver.serve { port in
            try await withSender([("/hang", .seconds(60)), ("/ok", .seconds(60))], port: port, notifications: 12) { _ in
                // With one client for every target, its pool of 8 connections to this host and port was the hanging
                // target's: the healthy one got 4 of 12 at once and the rest when the hangs ended.
                try await eventually("the healthy target gets all 12 while the other hangs", timeout: .seconds(30)) {
                    receiver.received.filter { $0.headers["x-reclaim-notification-uuid"] != nil }.count >= 12
                }
                #expect(receiver.hangs.withLock { $0.allSatisfy { $0.end == nil } }, "the hangs had ended: the test proves nothing")
            }
        }
    }

    @Test("a target's timeout bounds the whole exchange: an answer that trickles its body is cut at the timeout and retried")
    func tricklingBodyBounded() async throws {
        let receiver = TestReceiver(byPath: { _ in .trickle(every: .seconds(1), bytes: 60) })
        try await receiver.serve { port in
            try await withSender([("/trickle", .seconds(2))], port: port, notifications: 1) { client in
                // Before: the send stayed open for as long as the receiver kept sending (60 s here).
                try await eventually("the trickling send failed as timed out", timeout: .seconds(40)) {
                    let rows = try await client.query(
                        "SELECT count(*)::bigint FROM reclaim.jobs WHERE kind = 'forward' AND last_error LIKE 'timed out%'",
                        logger: logger
                    )
                    for try await count in rows.decode(Int64.self) { return count == 1 }
                    return false
                }
            }
        }
    }
}
