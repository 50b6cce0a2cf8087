import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import ReclaimService
import ReclaimStore
import ReclaimTestSupport
import Testing

@Suite("/console over a real socket", .poolWatchdog)
struct ConsoleTests {
    let logger = TestPostgres.logger

    /// The numbers a page shows, by their `data-metric` name.
    static func metrics(in html: String) -> [String: String] {
        var found: [String: String] = [:]
        let pattern = try! Regex(#"data-metric="([^"]+)">([^<]*)<"#)
        for match in html.matches(of: pattern) {
            if let name = match.output[1].substring, let value = match.output[2].substring { found[String(name)] = String(value) }
        }
        return found
    }

    @Test("sign-in sets a strict session cookie; the page's numbers are the views'; another app's key sees none of them")
    func page() async throws {
        let setup = try CampaignTestSetup(extraApps: "  - {bundleId: com.example.other, environments: [Sandbox]}")
        defer { setup.remove() }
        try await withProcessedCorpus(setup) { client, dependencies in
            let keys = TestKeys(client: client)
            let admin = try await keys.create(scope: .admin, bundleId: nil, logger: logger)
            let appConsole = try await keys.create(scope: .console, bundleId: "GeniusParentingAI", logger: logger)
            let otherConsole = try await keys.create(scope: .console, bundleId: "com.example.other", logger: logger)
            let appKey = try await keys.create(scope: .app, bundleId: "GeniusParentingAI", logger: logger)
            try await client.query(
                """
                INSERT INTO reclaim.rejected_inputs (endpoint, problem, reason, body_sha256, body_size)
                VALUES ('/v1/apple/notifications', 'invalid-signature', 'the <script>alert(1)</script> signature', '\\x00', 1)
                """,
                logger: logger
            )
            let app = Application(router: buildRouter(dependencies), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.live) { http in
                func signIn(_ key: String, origin: String? = nil, extra: HTTPFields = [:]) async throws -> (HTTPResponse, String) {
                    var headers: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
                    if let origin { headers[.origin] = origin }
                    headers.append(contentsOf: extra)
                    let body = "key=" + (key.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? key)
                    return try await http.execute(uri: "/console/session", method: .post, headers: headers, body: ByteBuffer(string: body)) {
                        ($0.head, String(buffer: $0.body))
                    }
                }
                func page(cookie: String?) async throws -> (HTTPResponse, String) {
                    var headers = HTTPFields()
                    if let cookie { headers[.cookie] = cookie }
                    return try await http.execute(uri: "/console", method: .get, headers: headers) { ($0.head, String(buffer: $0.body)) }
                }
                func session(_ key: String) async throws -> String {
                    let (response, _) = try await signIn(key)
                    #expect(response.status == .seeOther)
                    #expect(response.headerFields[.location] == "/console")
                    let setCookie = try #require(response.headerFields[.setCookie])
                    #expect(setCookie.contains("HttpOnly"))
                    #expect(setCookie.contains("SameSite=Strict"))
                    #expect(setCookie.contains("Path=/console"))
                    #expect(!setCookie.contains(key), "the cookie must not carry the key")
                    return String(try #require(setCookie.split(separator: ";").first))
                }

                // Without a session: the sign-in form, with headers that let no script run.
                let (login, loginBody) = try await page(cookie: nil)
                #expect(login.status == .ok)
                #expect(login.headerFields[.contentType] == "text/html; charset=utf-8")
                #expect(login.headerFields[.contentSecurityPolicy]?.contains("default-src 'none'") == true)
                #expect(loginBody.contains(#"action="/console/session""#))

                #expect(try await signIn("rk_admin_not-a-key").0.status == .unauthorized)
                #expect(try await signIn(appKey).0.status == .forbidden, "app keys ship inside apps: they must not open the console")
                #expect(try await signIn(admin, origin: "https://evil.example").0.status == .forbidden)
                // Cross-site posts a browser marks otherwise (issue 26): an opaque origin, a foreign page without Origin,
                // and Fetch Metadata saying cross-site. Same-site pages and non-browser clients are served.
                let secFetchSite = HTTPField.Name("Sec-Fetch-Site")!
                #expect(try await signIn(admin, origin: "null").0.status == .forbidden)
                #expect(try await signIn(admin, extra: [.referer: "https://evil.example/page"]).0.status == .forbidden)
                #expect(try await signIn(admin, extra: [secFetchSite: "cross-site"]).0.status == .forbidden)
                #expect(try await signIn(admin, extra: [secFetchSite: "same-site"]).0.status == .forbidden)
                let port = try #require(http.port)
                // The test client names the server `localhost` in Host.
                #expect(try await signIn(admin, origin: "http://localhost:\(port)").0.status == .seeOther)
                #expect(
                    try await signIn(admin, extra: [.referer: "http://localhost:\(port)/console"]).0.status == .seeOther
                )
                // What a browser sends from a page with a no-referrer policy: Origin null, but Fetch Metadata same-origin.
                #expect(try await signIn(admin, origin: "null", extra: [secFetchSite: "same-origin"]).0.status == .seeOther)
                #expect(try await signIn(admin, origin: "https://evil.example", extra: [secFetchSite: "cross-site"]).0.status == .forbidden)
                #expect(try await signIn(admin, origin: "http://127.0.0.1:\(port)").0.status == .forbidden, "another host is another origin")
                #expect(try await signIn(admin, origin: "HTTP://LocalHost:\(port)").0.status == .seeOther, "scheme and host compare without case")

                // An admin key: every app, refusals included; each number as the views give it.
                let (full, html) = try await page(cookie: try await session(admin))
                #expect(full.status == .ok)
                let shown = Self.metrics(in: html)
                let funnel = try await client.query(
                    "SELECT campaign_id, decided, held_out, offered, delivered, shown, redeemed FROM reclaim.campaign_funnel",
                    logger: logger
                )
                var campaigns = 0
                for try await (campaign, decided, heldOut, offered, delivered, seen, redeemed) in funnel.decode(
                    (String, Int, Int, Int, Int, Int, Int).self
                ) {
                    campaigns += 1
                    #expect(shown["campaign.\(campaign).decided"] == "\(decided)")
                    #expect(shown["campaign.\(campaign).held_out"] == "\(heldOut)")
                    #expect(shown["campaign.\(campaign).offered"] == "\(offered)")
                    #expect(shown["campaign.\(campaign).delivered"] == "\(delivered)")
                    #expect(shown["campaign.\(campaign).shown"] == "\(seen)")
                    #expect(shown["campaign.\(campaign).redeemed"] == "\(redeemed)")
                }
                #expect(campaigns == 2)
                #expect(shown["campaign.winback-expired.offered"] == "7")
                for try await (campaign, treated, heldOut) in try await client.query(
                    "SELECT campaign_id, treated, held_out FROM reclaim.campaign_lift",
                    logger: logger
                ).decode((String, Int, Int).self) {
                    #expect(shown["campaign.\(campaign).treated"] == "\(treated)")
                    #expect(shown["campaign.\(campaign).lift_held_out"] == "\(heldOut)")
                }
                for try await (state, jobs) in try await client.query("SELECT state, jobs FROM reclaim.queue_health", logger: logger).decode(
                    (String, Int).self
                ) {
                    #expect(shown["queue.\(state)"] == "\(jobs)")
                }
                // The corpus was received moments ago: all 116 are within the last 24 hours.
                #expect(shown["notifications.total"] == "116")
                #expect(shown["notifications.DID_CHANGE_RENEWAL_STATUS.AUTO_RENEW_DISABLED"] != nil)
                #expect(shown["dead_jobs.count"] == "0")
                #expect(shown["rejections.invalid-signature"] == "1")
                #expect(html.contains("the &lt;script&gt;alert(1)&lt;/script&gt; signature"))
                #expect(!html.contains("<script"))
                #expect(html.contains(#"<details id="sql-campaigns">"#))
                #expect(html.contains("FROM reclaim.campaign_funnel f"))

                // A console key of the corpus's app: its campaigns, no refusals (they name no trusted app).
                let (_, appHTML) = try await page(cookie: try await session(appConsole))
                #expect(Self.metrics(in: appHTML)["campaign.winback-expired.offered"] == "7")
                #expect(Self.metrics(in: appHTML)["rejections.invalid-signature"] == nil)
                #expect(appHTML.contains("bundle_id = &#39;GeniusParentingAI&#39;"), "the SQL shown is the app's")

                // A console key of another app: none of the corpus app's numbers.
                let otherCookie = try await session(otherConsole)
                let (_, otherHTML) = try await page(cookie: otherCookie)
                let other = Self.metrics(in: otherHTML)
                #expect(other["notifications.total"] == "0")
                #expect(other.keys.allSatisfy { !$0.hasPrefix("campaign.") }, "\(other)")
                #expect(!otherHTML.contains("GeniusParentingAI"))

                // A forged or altered cookie, and a revoked key's session: back to the sign-in form.
                let altered = otherCookie.replacingOccurrences(of: ".", with: ".9", options: [], range: otherCookie.range(of: "."))
                for cookie in [altered, "reclaim_console=\(UUID().uuidString.lowercased()).9999999999.AAAA", "reclaim_console=garbage"] {
                    let (response, body) = try await page(cookie: cookie)
                    #expect(response.status == .ok)
                    #expect(body.contains(#"action="/console/session""#), "\(cookie)")
                    #expect(Self.metrics(in: body).isEmpty)
                }
                // Sign-out ends the session on the server: a copy of the cookie no longer opens the page (issue 26), while
                // a session signed in afterwards works. Signing out from another site is refused and ends nothing.
                let kept = try await session(appConsole)
                #expect(Self.metrics(in: try await page(cookie: kept).1)["campaign.winback-expired.offered"] == "7")
                func signOut(_ cookie: String, origin: String?) async throws -> HTTPResponse.Status {
                    var headers: HTTPFields = [.cookie: cookie]
                    if let origin { headers[.origin] = origin }
                    return try await http.execute(uri: "/console/logout", method: .post, headers: headers) { $0.status }
                }
                #expect(try await signOut(kept, origin: "null") == .forbidden)
                #expect(Self.metrics(in: try await page(cookie: kept).1)["campaign.winback-expired.offered"] == "7")
                #expect(try await signOut(kept, origin: nil) == .seeOther)
                #expect(try await page(cookie: kept).1.contains("Your session ended"), "a copied cookie must not outlive sign-out")
                try await Task.sleep(for: .seconds(1.1))  // sessions are stamped in whole seconds
                #expect(Self.metrics(in: try await page(cookie: try await session(appConsole)).1)["campaign.winback-expired.offered"] == "7")

                let otherId = try #require(try await keys.list(bundleId: "com.example.other", logger: logger).first { $0.scope == .console }?.id)
                #expect(try await keys.revoke(id: otherId, logger: logger))
                #expect(try await page(cookie: otherCookie).1.contains("Your session ended"))

                // The form is small: a large body is refused, not read.
                let large = try await http.execute(
                    uri: "/console/session",
                    method: .post,
                    headers: [.contentType: "application/x-www-form-urlencoded"],
                    body: ByteBuffer(string: "key=" + String(repeating: "k", count: 10_000))
                ) { $0.status }
                #expect(large == .contentTooLarge)
            }
        }
    }

    @Test("business numbers are Production's by default when an app accepts Production; Sandbox is one click away")
    func productionByDefault() async throws {
        let setup = try CampaignTestSetup(extraApps: "  - {bundleId: com.example.live, appAppleId: 1, environments: [Production, Sandbox]}")
        defer { setup.remove() }
        try await withProcessedCorpus(setup) { client, dependencies in
            let admin = try await TestKeys(client: client).create(scope: .admin, bundleId: nil, logger: logger)
            let app = Application(router: buildRouter(dependencies), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.live) { http in
                let cookie = try await http.execute(
                    uri: "/console/session",
                    method: .post,
                    headers: [.contentType: "application/x-www-form-urlencoded"],
                    body: ByteBuffer(string: "key=" + (admin.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? admin))
                ) { String(try #require($0.head.headerFields[.setCookie]?.split(separator: ";").first)) }
                func page(_ uri: String) async throws -> String {
                    try await http.execute(uri: uri, method: .get, headers: [.cookie: cookie]) { String(buffer: $0.body) }
                }
                // The corpus is Apple's sandbox: nothing of it is Production business.
                let production = try await page("/console")
                #expect(Self.metrics(in: production).keys.allSatisfy { !$0.hasPrefix("campaign.") }, "\(Self.metrics(in: production))")
                #expect(production.contains("Production only"))
                #expect(production.contains(#"href="?environment=Sandbox#campaigns""#))
                #expect(production.contains("f.environment = &#39;Production&#39;"), "the SQL shown is the one run")
                let sandbox = try await page("/console?environment=Sandbox")
                #expect(Self.metrics(in: sandbox)["campaign.winback-expired.offered"] == "7")
                #expect(sandbox.contains(#"href="?environment=Production#campaigns""#))
                // Anything else is the default, not an error and not a way into the SQL.
                #expect(Self.metrics(in: try await page("/console?environment=x%27%3B")).keys.allSatisfy { !$0.hasPrefix("campaign.") })
            }
        }
    }
}
