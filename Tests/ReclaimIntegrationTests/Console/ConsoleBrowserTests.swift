import Foundation
import Hummingbird
import HummingbirdTesting
import ReclaimService
import ReclaimStore
import ReclaimTestSupport
import Testing

/// /console in a real browser: Debian's headless Chromium, driven by selenium through chromedriver (both
/// installed by scripts/install-deps). The browser signs in through the form as a person would.
@Suite("/console in headless Chromium", .poolWatchdog)
struct ConsoleBrowserTests {
    /// A headless Chromium on a phone-sized window, `driver`, signed in at `base` with `key` through the form; the
    /// script's own arguments follow from `sys.argv[3]` on.
    static let signedIn = #"""
        import json, sys
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait

        base, key = sys.argv[1:3]
        options = Options()
        for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=390,844"):
            options.add_argument(argument)
        options.binary_location = "/usr/bin/chromium"
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        def sign_in():
            driver.get(base + "/console")
            driver.find_element(By.ID, "key").send_keys(key)
            driver.find_element(By.CSS_SELECTOR, 'form[action="/console/session"] button').click()

        """#

    static let script =
        signedIn + #"""
            screenshot = sys.argv[3]
            try:
                sign_in()
                WebDriverWait(driver, 20).until(lambda d: d.find_elements(By.ID, "campaigns"))
                result = {
                    "title": driver.title,
                    "sections": [s.get_attribute("id") for s in driver.find_elements(By.TAG_NAME, "section")],
                    "metrics": {a.get_attribute("data-metric"): a.text for a in driver.find_elements(By.CSS_SELECTOR, "[data-metric]")},
                    "charts": len(driver.find_elements(By.CSS_SELECTOR, "svg")),
                    # A phone-sized window: the page itself must not scroll sideways (tables scroll in their own box).
                    "pageWidth": driver.execute_script("return document.documentElement.scrollWidth"),
                    "windowWidth": driver.execute_script("return window.innerWidth"),
                    "console": [entry for entry in driver.get_log("browser") if entry["level"] in ("SEVERE", "WARNING")],
                }
                # The whole page, as tall as it is.
                height = driver.execute_script("return document.documentElement.scrollHeight")
                driver.set_window_size(390, min(height + 100, 8000))
                driver.save_screenshot(screenshot)
                print(json.dumps(result))
            finally:
                driver.quit()
            """#

    struct Result: Decodable {
        let title: String
        let sections: [String]
        let metrics: [String: String]
        let charts: Int
        let pageWidth: Int
        let windowWidth: Int
        let console: [[String: String]]
    }

    @Test("signs in through the form, shows every section with no console error, fits a phone; screenshot written")
    func browser() async throws {
        let setup = try CampaignTestSetup()
        defer { setup.remove() }
        try await withProcessedCorpus(setup) { client, dependencies in
            let key = try await TestKeys(client: client).create(scope: .console, bundleId: nil, logger: TestPostgres.logger)
            let app = Application(router: buildRouter(dependencies), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.live) { http in
                let port = try #require(http.port)
                let screenshot = try Self.artifacts().appendingPathComponent("console.png")
                try? FileManager.default.removeItem(at: screenshot)
                let printed = try await Self.runPython(["http://127.0.0.1:\(port)", key, screenshot.path])
                let result = try JSONDecoder().decode(Result.self, from: Data(printed.utf8))
                #expect(result.title == "Reclaim console")
                #expect(result.sections == ["notifications", "queue", "dead-jobs", "outbound", "campaigns", "cancel-sheet", "rejections", "sql"])
                #expect(result.console.isEmpty, "the browser logged: \(result.console)")
                #expect(result.metrics["notifications.total"] == "116")
                #expect(result.metrics["campaign.winback-expired.offered"] == "7")
                #expect(result.charts >= 3, "the hourly chart and one funnel per campaign")
                #expect(result.pageWidth <= result.windowWidth, "the page scrolls sideways on a phone: \(result.pageWidth) > \(result.windowWidth)")
                let png = try Data(contentsOf: screenshot)
                #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]), "the screenshot is a PNG")
                print("console screenshot: \(screenshot.path)")
            }
        }
    }

    /// Where tests leave files for people to look at: `.build/test-artifacts` of the package.
    static func artifacts() throws -> URL {
        let directory = Binaries.repositoryRoot.appendingPathComponent(".build/test-artifacts")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// Runs the selenium script (it takes seconds, awaited without holding a thread); its stdout on success.
    static func runPython(_ arguments: [String], script: String = script) async throws -> String {
        let run = try await runProcess("/usr/bin/env", ["python3", "-c", script] + arguments)
        guard run.status == 0 else {
            throw PythonCrossCheck.Failure(description: "selenium/chromium failed: \(run.errors)\(run.output)")
        }
        return run.output
    }
}
