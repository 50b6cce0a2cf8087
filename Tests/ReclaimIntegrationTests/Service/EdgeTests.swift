import Foundation
import Hummingbird
import HummingbirdTesting
import PostgresNIO
import ReclaimService
import ReclaimStore
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
import ReclaimTestSupport
#endif

@Suite("The HTTP edge over a real socket: slow clients, rate limits", .poolWatchdog)
struct EdgeTests {
    let logger = TestPostgres.logger
    static let config = try! ReclaimConfig.parse(
        yaml: """
            apps: [{bundleId: com.example.app, environments: [Sandbox]}]
            server: {headerTimeout: 2s, bodyTimeout: 2s, rateLimitPerKey: 1, rateLimitBurst: 5, failedAuthenticationsPerMinute: 3}
            """
    )

    func withServer(config: ReclaimConfig = Self.config, _ body: @escaping @Sendable (Int, Database) async throws -> Void) async throws {
        try await withTestDatabase { client, _ in
            let dependencies = try Dependencies.test(postgres: client, config: config)
            let app = Application(
                router: buildRouter(dependencies),
                server: httpServer(config.server),
                configuration: .init(address: .hostname("127.0.0.1", port: 0))
            )
            try await app.test(.live) { http in try await body(try #require(http.port), client) }
        }
    }

    @Test("a client that sends its headers one byte a second is cut off at the header timeout")
    func slowHeaders() async throws {
        try await withServer { port, _ in
            let (closed, seconds) = try await RawSocket.onThread {
                let socket = try RawSocket(port: port, timeout: 1)
                let started = Date()
                for byte in "GET /healthz HTTP/1.1\r\nHost: test\r\nX-Slow: ".utf8 {
                    guard socket.send(Data([byte])) else { return (true, Date().timeIntervalSince(started)) }
                    if socket.receive()?.isEmpty == true { return (true, Date().timeIntervalSince(started)) }  // closed
                    if Date().timeIntervalSince(started) > 10 { break }
                }
                return (false, Date().timeIntervalSince(started))
            }
            #expect(closed, "the server kept a trickling connection open")
            #expect(seconds < 5)
        }
    }

    @Test("each key's budget and each address's failed authentications are limited: 429 with Retry-After")
    func rateLimits() async throws {
        try await withServer { port, client in
            let key = try await TestKeys(client: client).create(scope: .app, bundleId: "com.example.app", logger: logger)
            func get(_ key: String) async throws -> (Int, String?) {
                var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/v1/offers?appAccountToken=\(UUID())")!)
                request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
                let (_, response) = try await URLSession.shared.boundedData(for: request)
                let http = response as? HTTPURLResponse
                return (http?.statusCode ?? 0, http?.value(forHTTPHeaderField: "Retry-After"))
            }
            // A burst of 5, then one a second: twenty requests at once must meet the limit, however slow the machine
            // (one after another, each taking over a second on a loaded machine, they might not).
            let answers = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                for _ in 0..<20 { group.addTask { try await get(key) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let statuses = answers.map(\.0)
            #expect(statuses.filter { $0 == 200 }.count >= 5, "\(statuses)")
            let limited = answers.first { $0.0 == 429 } ?? (0, nil)
            #expect(limited.0 == 429 && Int(limited.1 ?? "") ?? 0 >= 1, "\(statuses)")
            #expect(Set(statuses).isSubset(of: [200, 429]), "\(statuses)")

            var failed: [Int] = []
            for _ in 0..<5 { failed.append(try await get("rk_app_wrong").0) }
            #expect(failed.prefix(3).allSatisfy { $0 == 401 }, "\(failed)")
            #expect(failed.suffix(2).allSatisfy { $0 == 429 }, "\(failed)")
        }
    }

    @Test("behind a trusted proxy each client has its own failed-authentication budget; nobody else's X-Forwarded-For is believed")
    func trustedProxies() async throws {
        @Sendable func failures(port: Int, from clients: [String]) async throws -> [String: [Int]] {
            var statuses: [String: [Int]] = [:]
            for client in clients {
                for _ in 0..<4 {
                    var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/v1/offers?appAccountToken=\(UUID())")!)
                    request.setValue("Bearer rk_app_wrong", forHTTPHeaderField: "Authorization")
                    // What a proxy appends: the client it received from, after anything the client claimed itself.
                    request.setValue("198.51.100.9, \(client)", forHTTPHeaderField: "X-Forwarded-For")
                    let (_, response) = try await URLSession.shared.boundedData(for: request)
                    statuses[client, default: []].append((response as? HTTPURLResponse)?.statusCode ?? 0)
                }
            }
            return statuses
        }
        // The server's peer is the test client on 127.0.0.1: trusted as the proxy, each forwarded client spends its
        // own budget of 3 failures.
        let behindProxy = try ReclaimConfig.parse(
            yaml: """
                apps: [{bundleId: com.example.app, environments: [Sandbox]}]
                server: {failedAuthenticationsPerMinute: 3, trustedProxies: [127.0.0.1/32, "::1"]}
                """
        )
        try await withServer(config: behindProxy) { port, _ in
            let statuses = try await failures(port: port, from: ["203.0.113.1", "203.0.113.2"])
            #expect(statuses["203.0.113.1"] == [401, 401, 401, 429], "\(statuses)")
            #expect(statuses["203.0.113.2"] == [401, 401, 401, 429], "one client's failures do not lock out another: \(statuses)")
        }
        // No trusted proxy: the header is anyone's to send, and is ignored; both "clients" are the one peer.
        try await withServer { port, _ in
            let statuses = try await failures(port: port, from: ["203.0.113.1", "203.0.113.2"])
            #expect(statuses["203.0.113.1"] == [401, 401, 401, 429], "\(statuses)")
            #expect(statuses["203.0.113.2"] == [429, 429, 429, 429], "\(statuses)")
        }
        #expect(throws: ConfigError.self) {
            try ReclaimConfig.parse(yaml: "apps: []\nserver: {trustedProxies: [10.0.0.0/33]}")
        }
    }

    @Test("a trusted proxy's X-Forwarded-For that is too long (431) or unreadable (400) is refused, never charged to the proxy")
    func forwardedForRefusals() async throws {
        let behindProxy = try ReclaimConfig.parse(
            yaml: """
                apps: [{bundleId: com.example.app, environments: [Sandbox]}]
                server: {failedAuthenticationsPerMinute: 3, trustedProxies: [127.0.0.1/32, "::1"]}
                """
        )
        try await withServer(config: behindProxy) { port, _ in
            @Sendable func status(forwardedFor: String?) async throws -> (Int, String) {
                var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/v1/offers?appAccountToken=\(UUID())")!)
                request.setValue("Bearer rk_app_wrong", forHTTPHeaderField: "Authorization")
                if let forwardedFor { request.setValue(forwardedFor, forHTTPHeaderField: "X-Forwarded-For") }
                let (data, response) = try await URLSession.shared.boundedData(for: request)
                return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
            }
            let long = (0..<400).map { "198.51.100.\($0 % 250)" }.joined(separator: ", ")
            for _ in 0..<5 {
                let (code, body) = try await status(forwardedFor: long)
                #expect(code == 431 && body.contains("urn:reclaim:problem:forwarded-for-too-long"), "\(code) \(body)")
                let (unreadable, problem) = try await status(forwardedFor: "203.0.113.5, not-an-address")
                #expect(unreadable == 400 && problem.contains("urn:reclaim:problem:forwarded-for-unreadable"), "\(unreadable) \(problem)")
            }
            // Ten refusals later, the proxy's own budget (its requests without the header) is untouched: 401, not 429.
            #expect(try await status(forwardedFor: nil).0 == 401)
            #expect(try await status(forwardedFor: "203.0.113.7").0 == 401)
        }
    }

    @Test("a database error is answered as what it is: a lost connection is 503, a refused statement a logged 500")
    func databaseErrorsMapped() async throws {
        try await withTestDatabase { client, _ in
            let router = Router()
            router.middlewares.add(ProblemMiddleware())
            router.get("/refused") { _, _ -> String in
                // 22012 division_by_zero: a defect of the statement, like a constraint violation (23505).
                try await client.query("SELECT 1 / 0", logger: TestPostgres.logger)
                return "unreachable"
            }
            router.get("/lost") { _, _ -> String in
                // 57P01 admin_shutdown, then a closed connection: the database went away mid-request.
                try await client.query("SELECT pg_terminate_backend(pg_backend_pid())", logger: TestPostgres.logger)
                return "unreachable"
            }
            let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.live) { http in
                try await http.execute(uri: "/refused", method: .get) { response in
                    #expect(response.status == .internalServerError, "\(String(buffer: response.body))")
                    #expect(String(buffer: response.body).contains("urn:reclaim:problem:internal-error"))
                }
                try await http.execute(uri: "/lost", method: .get) { response in
                    #expect(response.status == .serviceUnavailable, "\(String(buffer: response.body))")
                    #expect(String(buffer: response.body).contains("urn:reclaim:problem:database-unavailable"))
                }
            }
        }
    }

    @Test("a malformed chunked body is 400 malformed-request, not a logged 500")
    func malformedChunkedBody() async throws {
        try await withServer { port, _ in
            let answer = try await RawSocket.onThread { () -> String in
                let socket = try RawSocket(port: port, timeout: 5)
                _ = socket.send(
                    "POST /v1/apple/notifications HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        + "Transfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n"
                )
                var text = ""
                while let data = socket.receive(), !data.isEmpty {
                    text += String(decoding: data, as: UTF8.self)
                    if text.contains("}") { break }
                }
                return text
            }
            #expect(answer.hasPrefix("HTTP/1.1 400"), "\(answer)")
            #expect(answer.contains("urn:reclaim:problem:malformed-request"), "\(answer)")
        }
    }
}
