import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import ReclaimService
import ReclaimStore
import ReclaimTestSupport
import Testing

/// Issue 62: the subscriber's story in the console, searched in a real browser as support would, admin keys only.
@Suite("/console/subscriber in headless Chromium", .poolWatchdog)
struct ConsoleSubscriberTests {
    static let script =
        ConsoleBrowserTests.signedIn + #"""
            otid = sys.argv[3]
            try:
                sign_in()
                WebDriverWait(driver, 20).until(lambda d: d.find_elements(By.ID, "subscriber-id"))
                driver.find_element(By.ID, "subscriber-id").send_keys(otid)
                driver.find_element(By.CSS_SELECTOR, 'form[action="/console/subscriber"] button').click()
                WebDriverWait(driver, 20).until(lambda d: d.find_elements(By.ID, "subscriptions"))
                def cells(table):
                    return [[td.text for td in tr.find_elements(By.TAG_NAME, "td")]
                            for tr in driver.find_elements(By.CSS_SELECTOR, 'table[data-table="%s"] tbody tr' % table)]
                result = {
                    "url": driver.current_url,
                    "headings": [h.text for h in driver.find_elements(By.TAG_NAME, "h2")],
                    "decisions": cells("decisions"),
                    "offers": cells("offers"),
                    "pageWidth": driver.execute_script("return document.documentElement.scrollWidth"),
                    "windowWidth": driver.execute_script("return window.innerWidth"),
                    "console": [entry for entry in driver.get_log("browser") if entry["level"] in ("SEVERE", "WARNING")],
                }
                print(json.dumps(result))
            finally:
                driver.quit()
            """#

    struct Result: Decodable {
        let url: String
        let headings: [String]
        let decisions: [[String]]
        let offers: [[String]]
        let pageWidth: Int
        let windowWidth: Int
        let console: [[String: String]]
    }

    @Test(
        "an admin searches the dashboard's form by transaction id and reads the decisions with their reasons and the offer; a console key is refused"
    )
    func search() async throws {
        let setup = try CampaignTestSetup()
        defer { setup.remove() }
        try await withProcessedCorpus(setup) { client, dependencies in
            let logger = TestPostgres.logger
            let keys = TestKeys(client: client)
            let admin = try await keys.create(scope: .admin, bundleId: nil, logger: logger)
            let consoleKey = try await keys.create(scope: .console, bundleId: nil, logger: logger)
            let otid = try await client.withConnection(logger: logger) { connection in
                let rows = try await connection.query(
                    "SELECT original_transaction_id FROM reclaim.offers WHERE campaign_id IS NOT NULL ORDER BY original_transaction_id LIMIT 1",
                    logger: logger
                )
                for try await id in rows.decode(String.self) { return id }
                throw DeadlineExceeded(description: "no offer in the corpus")
            }
            let app = Application(router: buildRouter(dependencies), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.live) { http in
                let port = try #require(http.port)
                let printed = try await ConsoleBrowserTests.runPython(["http://127.0.0.1:\(port)", admin, otid], script: Self.script)
                let result = try JSONDecoder().decode(Result.self, from: Data(printed.utf8))
                #expect(result.url.contains("/console/subscriber?id=\(otid)"))
                #expect(result.headings.contains { $0.hasPrefix(otid) }, "\(result.headings)")
                #expect(result.decisions.contains { $0.count == 4 && $0[2] == "offered" && !$0[3].isEmpty }, "\(result.decisions)")
                #expect(
                    result.offers.contains { $0.count == 5 && ["ready", "delivered", "redeemed", "withdrawn", "expired"].contains($0[3]) },
                    "\(result.offers)"
                )
                #expect(result.console.isEmpty, "the browser logged: \(result.console)")
                #expect(result.pageWidth <= result.windowWidth, "the page scrolls sideways on a phone: \(result.pageWidth) > \(result.windowWidth)")

                // A console key's session sees counts, not people: 403 with why. Signed in over the form, as a browser does.
                let signIn = try await http.execute(
                    uri: "/console/session",
                    method: .post,
                    headers: [.contentType: "application/x-www-form-urlencoded"],
                    body: ByteBuffer(string: "key=\(consoleKey)")
                ) { $0.headers[.setCookie] }
                let cookie = try #require(signIn?.split(separator: ";").first.map(String.init))
                try await http.execute(uri: "/console/subscriber?id=\(otid)", method: .get, headers: [.cookie: cookie]) { response in
                    #expect(response.status == .forbidden)
                    let body = String(buffer: response.body)
                    #expect(body.contains("takes an admin key") && !body.contains("data-table"))
                }
                // Without a session: back to the sign-in page.
                try await http.execute(uri: "/console/subscriber?id=\(otid)", method: .get) { #expect($0.status == .seeOther) }
            }
        }
    }
}
