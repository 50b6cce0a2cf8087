import Foundation
import Hummingbird
import HummingbirdTesting
import ReclaimService
import ReclaimStore
import ReclaimTestSupport
import Testing

@Suite("User tokens: an app that requires them gets offers only for the user its backend vouched for", .poolWatchdog)
struct UserTokenTests {
    let logger = TestPostgres.logger
    static let secret = "0123456789abcdef0123456789abcdef-test-secret"

    /// A token made the way an app backend would, by Python's hmac (not Reclaim's code).
    static func token(for appAccountToken: String, expiresIn seconds: Int, secret: String = Self.secret) async throws -> String {
        let text = try await Subprocess.run(
            "/usr/bin/env",
            [
                "python3", "-c",
                """
                import base64, hashlib, hmac, sys, time
                expiry = int(time.time()) + int(sys.argv[3])
                mac = hmac.new(sys.argv[1].encode(), f"{sys.argv[2]}.{expiry}".encode(), hashlib.sha256).digest()
                print(f"{expiry}." + base64.urlsafe_b64encode(mac).decode().rstrip("="))
                """,
                secret, appAccountToken, String(seconds),
            ]
        ).output
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("missing, expired, too long-lived or another user's token: 401; the user's own token: the offers")
    func required() async throws {
        let setup = try CampaignTestSetup(userTokenSecret: Self.secret)
        defer { setup.remove() }
        let user = "00000000-0000-0000-0000-000000000051"
        try await withProcessedCorpus(setup) { client, dependencies in
            let appKey = try await TestKeys(client: client).create(scope: .app, bundleId: "GeniusParentingAI", logger: logger)
            let app = Application(router: buildRouter(dependencies), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.live) { http in
                func get(_ token: String?, query: String = user) async throws -> (HTTPResponse.Status, String) {
                    var headers: HTTPFields = [.authorization: "Bearer \(appKey)"]
                    if let token { headers[.init("X-Reclaim-User-Token")!] = token }
                    return try await http.execute(uri: "/v1/offers?appAccountToken=\(query)", method: .get, headers: headers) {
                        ($0.status, String(buffer: $0.body))
                    }
                }
                for (token, reason) in await [
                    (nil, "requires"), (try Self.token(for: user, expiresIn: -10), "expired"),
                    (try Self.token(for: user, expiresIn: 3 * 86_400), "more than 24 hours"),
                    (try Self.token(for: UUID().uuidString.lowercased(), expiresIn: 600), "not made for this appAccountToken"),
                    ("garbage", "must be"),
                ] {
                    let (status, body) = try await get(token)
                    #expect(status == .unauthorized, "\(String(describing: token))")
                    #expect(body.contains("urn:reclaim:problem:invalid-user-token") && body.contains(reason), "\(body)")
                }
                let valid = try await Self.token(for: user, expiresIn: 600)
                let (status, body) = try await get(valid)
                #expect(status == .ok)
                #expect(body.contains("\"offerIdentifier\":\"WINBACK30\""), "\(body)")
                #expect(try await get(valid, query: user.uppercased()).0 == .ok, "the token is for the user, whatever the case of the query")
            }
        }
    }

    @Test("a secret rotated with an overlap: tokens of the new and of the previous secret are accepted, any other refused")
    func rotation() async throws {
        let previous = "fedcba9876543210fedcba9876543210-old-secret"
        let setup = try CampaignTestSetup(userTokenSecret: Self.secret, previousUserTokenSecret: previous)
        defer { setup.remove() }
        let user = "00000000-0000-0000-0000-000000000051"
        try await withProcessedCorpus(setup) { client, dependencies in
            let appKey = try await TestKeys(client: client).create(scope: .app, bundleId: "GeniusParentingAI", logger: logger)
            let app = Application(router: buildRouter(dependencies), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.live) { http in
                func status(_ token: String) async throws -> HTTPResponse.Status {
                    try await http.execute(
                        uri: "/v1/offers?appAccountToken=\(user)",
                        method: .get,
                        headers: [.authorization: "Bearer \(appKey)", .init("X-Reclaim-User-Token")!: token]
                    ) { $0.status }
                }
                let stranger = "0123456789abcdef0123456789abcdef-a-third-one"
                let fresh = try await status(try Self.token(for: user, expiresIn: 600))
                let old = try await status(try Self.token(for: user, expiresIn: 600, secret: previous))
                let other = try await status(try Self.token(for: user, expiresIn: 600, secret: stranger))
                #expect(fresh == .ok, "the new secret")
                #expect(old == .ok, "the previous secret")
                #expect(other == .unauthorized, "neither")
            }
        }
    }

    @Test(
        "the user token is checked before the route: missing, it is 401 even when appAccountToken is missing or malformed; present, it is checked against a well-formed appAccountToken; the lookup asks for none"
    )
    func checkedBeforeTheRoute() async throws {
        let setup = try CampaignTestSetup(userTokenSecret: Self.secret)
        defer { setup.remove() }
        try await withTestDatabase { client, _ in
            let appKey = try await TestKeys(client: client).create(scope: .app, bundleId: "GeniusParentingAI", logger: logger)
            let app = Application(router: buildRouter(try .test(postgres: client, config: setup.config)))
            try await app.test(.router) { http in
                func get(_ query: String, token: String?) async throws -> (HTTPResponse.Status, String) {
                    var headers: HTTPFields = [.authorization: "Bearer \(appKey)"]
                    if let token { headers[.init("X-Reclaim-User-Token")!] = token }
                    return try await http.execute(uri: "/v1/offers\(query)", method: .get, headers: headers) { ($0.status, String(buffer: $0.body)) }
                }
                for query in ["", "?appAccountToken=not-a-uuid"] {
                    let (status, body) = try await get(query, token: nil)
                    #expect(status == .unauthorized && body.contains("urn:reclaim:problem:invalid-user-token"), "\(query): \(body)")
                }
                // A token is made for one appAccountToken: without a readable one there is nothing to check it against.
                let token = try await Self.token(for: "00000000-0000-0000-0000-000000000051", expiresIn: 600)
                let (missing, missingBody) = try await get("", token: token)
                #expect(missing == .badRequest && missingBody.contains("urn:reclaim:problem:missing-parameter"), "\(missingBody)")
                let (malformed, malformedBody) = try await get("?appAccountToken=not-a-uuid", token: token)
                #expect(malformed == .badRequest && malformedBody.contains("urn:reclaim:problem:invalid-parameter"), "\(malformedBody)")
                let (lookup, lookupBody) = try await http.execute(
                    uri: "/v1/offers/lookup",
                    method: .post,
                    headers: [.authorization: "Bearer \(appKey)", .contentType: "application/json"],
                    body: ByteBuffer(string: "{}")
                ) { ($0.status, String(buffer: $0.body)) }
                #expect(lookup == .badRequest && lookupBody.contains("urn:reclaim:problem:invalid-body"), "\(lookupBody)")
            }
        }
    }
}
