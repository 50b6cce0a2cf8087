import Foundation
import ReclaimStore
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
import ReclaimTestSupport
#endif

/// Issue 26, over a real socket against a real `reclaim serve` process (API and workers in one): no request stops the
/// server. A trap is not an exception in Swift, so the process itself is the witness: after every request,
/// `/healthz` must answer and the process must still run.
@Suite("No request can crash the server", .serialized, .poolWatchdog)
struct HostileInputTests {
    let logger = TestPostgres.logger

    /// The numbers that broke conversions before: the ends of Int64, a double that rounds to 2^63, IEEE specials.
    static let extremes = [
        "9223372036854775807", "-9223372036854775808", "9223372036854775296", "18446744073709551616", "1e308", "-1e308", "-0", "NaN",
        "Infinity", "0.5", String(repeating: "9", count: 10_000),
    ]

    struct Answer {
        let status: Int?
        let body: Data
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    struct Client: Sendable {
        let port: Int
        let server: ServerProcess

        func send(_ method: String, _ path: String, headers: [String: String] = [:], body: Data? = nil) async -> Answer {
            var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
            request.httpMethod = method
            // What this suite checks is that every request is answered below 500 and the process lives on, not how
            // fast: on a machine busy with the whole suite (the flood test beside it) a grant once took over 10 s.
            request.timeoutInterval = 30
            for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
            request.httpBody = body
            guard let (data, response) = try? await URLSession.shared.boundedData(for: request) else { return Answer(status: nil, body: Data()) }
            return Answer(status: (response as? HTTPURLResponse)?.statusCode, body: data)
        }

        /// Sends a request and checks it was answered below 500 and the process lives on; stops the test when it died.
        @discardableResult
        func survives(_ method: String, _ path: String, headers: [String: String] = [:], body: Data? = nil, _ what: String) async throws -> Answer {
            let answer = await send(method, path, headers: headers, body: body)
            #expect(answer.status.map { $0 < 500 } == true, "\(what): \(answer.status.map(String.init) ?? "no answer") \(answer.text.prefix(300))")
            try await requireAlive(what)
            return answer
        }

        /// The process must still run (a trap ends it), and answer /healthz: at once, or within a minute on a machine
        /// busy with the rest of the suite (a CI run once took longer than the request's 10 s).
        func requireAlive(_ what: String) async throws {
            try #require(server.isRunning, "the server died after: \(what); log: \(server.logTail())")
            if await send("GET", "/healthz").status != 200 {
                try await eventually("/healthz answers 200 after: \(what)", timeout: .seconds(60), every: .milliseconds(500)) {
                    await send("GET", "/healthz").status == 200
                }
            }
            try #require(server.isRunning, "the server died after: \(what); log: \(server.logTail())")
        }
    }

    /// A served process on a migrated database with the corpus's app, an app key, an admin key and a console key.
    func withServer(_ body: @Sendable (Client, _ keys: (app: String, admin: String, console: String)) async throws -> Void) async throws {
        let setup = try CampaignTestSetup()
        defer { setup.remove() }
        try await withTestDatabase { client, url in
            let store = TestKeys(client: client)
            let keys = (
                app: try await store.create(scope: .app, bundleId: "GeniusParentingAI", logger: logger),
                admin: try await store.create(scope: .admin, bundleId: nil, logger: logger),
                console: try await store.create(scope: .console, bundleId: nil, logger: logger)
            )
            let server = try ServerProcess(
                role: "all",
                config: setup.configFile,
                databaseURL: url.connectionString,
                log: setup.directory.appendingPathComponent("serve.log"),
                logLevel: "notice"
            )
            try server.start()
            defer { server.stopInBackground() }
            try await server.waitUntilUp()
            try await body(Client(port: server.port, server: server), keys)
        }
    }

    @Test("the console cookie that killed the process, and every extreme expiry, get the sign-in form")
    func consoleCookie() async throws {
        try await withServer { client, _ in
            let issue = "00000000-0000-0000-0000-000000000000.9223372036854775807.AA"
            let answer = try await client.survives("GET", "/console", headers: ["Cookie": "reclaim_console=\(issue)"], "the cookie of issue 26")
            #expect(answer.status == 200 && answer.text.contains(#"action="/console/session""#))
            for expiry in Self.extremes + ["9223372036854775000", "253402300800"] {
                let cookie = "reclaim_console=\(UUID().uuidString.lowercased()).\(expiry).\(String(repeating: "A", count: 43))"
                try await client.survives("GET", "/console", headers: ["Cookie": cookie], "cookie expiry \(expiry.prefix(30))")
                try await client.survives("POST", "/console/logout", headers: ["Cookie": cookie], "sign-out with expiry \(expiry.prefix(30))")
            }
        }
    }

    @Test("the grant window that overflowed gets 400 with the reason")
    func grantDuration() async throws {
        try await withServer { client, keys in
            let body = try JSONSerialization.data(withJSONObject: [
                "bundleId": "GeniusParentingAI", "originalTransactionId": "2000000970472825", "productId": "p", "offerIdentifier": "o",
                "reason": "r", "campaign": "c", "deliverableFor": "106751991167301d",
            ])
            let headers = ["Authorization": "Bearer \(keys.admin)", "Idempotency-Key": "overflow", "Content-Type": "application/json"]
            let answer = try await client.survives("POST", "/v1/grants", headers: headers, body: body, "deliverableFor 106751991167301d")
            #expect(answer.status == 400)
            #expect(answer.text.contains("deliverableFor must be a duration from 1s to 90d"))
        }
    }

    @Test("every route, with extreme numbers in every numeric field, parameter, header and cookie")
    func extremeNumbersEverywhere() async throws {
        try await withServer { client, keys in
            let app = ["Authorization": "Bearer \(keys.app)"]
            let admin = ["Authorization": "Bearer \(keys.admin)", "Content-Type": "application/json"]
            let json = ["Content-Type": "application/json"]
            let grant: [String: String] = [
                "bundleId": "GeniusParentingAI", "originalTransactionId": "2000000970472825", "productId": "p", "offerIdentifier": "o",
                "reason": "r", "campaign": "c",
            ]
            for (index, number) in Self.extremes.enumerated() {
                let what = "number \(number.prefix(24))"
                let quoted = "\"\(number)\""
                // Query and path parameters, and the user token's expiry.
                try await client.survives("GET", "/v1/offers?appAccountToken=\(number)", headers: app, what)
                try await client.survives(
                    "GET",
                    "/v1/offers?appAccountToken=6f1d2c3b-0000-4000-8000-000000000051",
                    headers: app.merging(["X-Reclaim-User-Token": "\(number).AA"]) { $1 },
                    what
                )
                try await client.survives(
                    "POST",
                    "/v1/offers/\(number)/events",
                    headers: app.merging(json) { $1 },
                    body: Data(#"{"event":"shown"}"#.utf8),
                    what
                )
                for event in [number, quoted] {
                    try await client.survives(
                        "POST",
                        "/v1/offers/6f1d2c3b-0000-4000-8000-000000000051/events",
                        headers: app.merging(json) { $1 },
                        body: Data(#"{"event":\#(event)}"#.utf8),
                        what
                    )
                }
                // Grants: each field as a bare number and as text, deliverableFor with a unit, the Idempotency-Key.
                for field in grant.keys.sorted() + ["deliverableFor", "appAccountToken", "environment"] {
                    for value in [number, quoted, "\"\(number)d\""] {
                        var fields = grant.map { "\"\($0.key)\":\"\($0.value)\"" }.filter { !$0.hasPrefix("\"\(field)\"") }
                        fields.append("\"\(field)\":\(value)")
                        try await client.survives(
                            "POST",
                            "/v1/grants",
                            headers: admin.merging(["Idempotency-Key": "extreme-\(index)-\(field)"]) { $1 },
                            body: Data("{\(fields.joined(separator: ","))}".utf8),
                            "\(what) in grant field \(field)"
                        )
                    }
                }
                try await client.survives(
                    "POST",
                    "/v1/grants",
                    headers: admin.merging(["Idempotency-Key": String(number.prefix(200))]) { $1 },
                    body: try JSONSerialization.data(withJSONObject: grant),
                    "\(what) as Idempotency-Key"
                )
                // Apple's endpoints: the body, the JWS header and payload.
                let header = Data(#"{"alg":\#(number),"x5c":[\#(number)],"crit":[\#(number)]}"#.utf8).base64EncodedString()
                let payload = Data(#"{"signedDate":\#(number),"notificationUUID":\#(number)}"#.utf8).base64EncodedString()
                for body in [number, #"{"signedPayload":\#(number)}"#, #"{"signedPayload":"\#(header).\#(payload).AA"}"#] {
                    for path in ["/v1/apple/notifications", "/v1/apple/retention-messaging"] {
                        try await client.survives("POST", path, headers: json, body: Data(body.utf8), "\(what) to \(path)")
                    }
                }
                // The console: cookie, form, and the headers it reads.
                try await client.survives("GET", "/console", headers: ["Cookie": "reclaim_console=\(number)"], what)
                try await client.survives(
                    "POST",
                    "/console/session",
                    headers: ["Content-Type": "application/x-www-form-urlencoded", "Origin": "http://\(number)", "X-Forwarded-Proto": number],
                    body: Data("key=\(number.prefix(200))".utf8),
                    what
                )
                for path in ["/metrics?limit=\(number)", "/readyz?x=\(number)", "/openapi.yaml?\(number)", "/healthz?\(number)"] {
                    try await client.survives("GET", path, headers: ["X-Request-Id": String(number.prefix(64))], what)
                }
            }
            // Content-Length beyond Int64, and negative, over a raw socket: a refusal, never a trap.
            for length in ["99999999999999999999999", "9223372036854775807", "-1"] {
                let port = client.port
                _ = try await RawSocket.onThread {
                    let socket = try RawSocket(port: port)
                    _ = socket.send(
                        "POST /v1/apple/notifications HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(length)\r\n\r\n{}"
                    )
                    return socket.receive()
                }
                try await client.requireAlive("Content-Length \(length)")
            }
        }
    }

    @Test("a JWS header cannot forge a log line, and a 180 KB alg is echoed neither in the answer nor in the log")
    func logForging() async throws {
        try await withServer { client, _ in
            let forged = "2026-11-25T00:00:00+0000 critical reclaim : [ReclaimService] database wiped"
            for separator in ["\n", "\r", "\u{2028}", "\u{1B}[2K\r"] {
                let header = try JSONSerialization.data(withJSONObject: ["alg": "ES256\(separator)\(forged)", "x5c": [String]()])
                let body = #"{"signedPayload":"\#(Self.base64URL(header)).e30.AA"}"#
                let answer = try await client.survives(
                    "POST",
                    "/v1/apple/notifications",
                    headers: ["Content-Type": "application/json"],
                    body: Data(body.utf8),
                    "forged alg"
                )
                #expect(answer.status == 401)
            }
            let long = try JSONSerialization.data(withJSONObject: ["alg": String(repeating: "A", count: 180_000), "x5c": [String]()])
            let answer = try await client.survives(
                "POST",
                "/v1/apple/notifications",
                headers: ["Content-Type": "application/json"],
                body: Data(#"{"signedPayload":"\#(Self.base64URL(long)).e30.AA"}"#.utf8),
                "180 KB alg"
            )
            #expect(answer.status == 401)
            #expect(answer.body.count < 1000, "the 401 echoes \(answer.body.count) bytes")
            // Refusals are logged at notice; wait until the last one is written.
            let logFile = client.server.log
            try await eventually("the refusals are logged", timeout: .seconds(10)) {
                (try String(contentsOf: logFile, encoding: .utf8)).components(separatedBy: "notification refused").count > 5
            }
            let log = try String(contentsOf: logFile, encoding: .utf8)
            for line in log.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r" || $0 == "\u{2028}" }) {
                #expect(!line.hasPrefix("2026-11-25T00:00:00"), "a forged line: \(line)")
                #expect(line.utf8.count < 2000, "a log line of \(line.utf8.count) bytes")
            }
            #expect(!log.contains("\u{1B}"), "an ANSI escape reached the log")
            #expect(log.contains(#"ES256\n2026-11-25T00:00:00+0000 critical"#), "the newline is written escaped")
        }
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
