import Foundation
import Hummingbird
import HummingbirdTesting
import ReclaimDomain
import ReclaimStore
import ReclaimTestSupport
import Synchronization
import Testing

@testable import ReclaimService

/// Issue 51: the cancel sheet switched on from Reclaim (`reclaim messaging plan | apply | status | test`) against
/// ``AppleAPIStandIn`` keeping messages, images, defaults and the realtime URL, reviewing messages, and running a
/// performance test.
@Suite("Switching the cancel sheet on: messages, defaults, the realtime URL and Apple's performance test", .poolWatchdog)
struct MessagingSetupTests {
    let logger = TestPostgres.logger
    typealias Setup = RecoveryTests.Setup
    static let welcome = "5f0c3e2a-9b1d-4c6e-8a7f-1d2e3f4a5b01"
    static let discount = "5f0c3e2a-9b1d-4c6e-8a7f-1d2e3f4a5b02"
    static let picture = "5f0c3e2a-9b1d-4c6e-8a7f-1d2e3f4a5b09"

    /// A PNG's signature, IHDR (`width` × `height`, colour type `colorType`) and IEND: what Reclaim reads of it.
    static func png(width: Int, height: Int, colorType: UInt8 = 2) -> Data {
        func u32(_ value: Int) -> [UInt8] { [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
        var bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        bytes += u32(13) + Array("IHDR".utf8) + u32(width) + u32(height) + [8, colorType, 0, 0, 0] + [0, 0, 0, 0]
        bytes += u32(0) + Array("IEND".utf8) + [0xAE, 0x42, 0x60, 0x82]
        return Data(bytes)
    }

    static func yaml(_ setup: Setup, port: Int, campaignMessage: String = discount, products: String = "[com.example.monthly]") -> String {
        """
        apps:
          - bundleId: com.example.app
            appAppleId: 1234567890
            environments: [Production]
            issuerId: 11111111-2222-3333-4444-555555555555
            signingKeys: [{keyId: OFFERKEY01, file: \(setup.directory.path)/offer.p8}]
            serverAPI: {keyId: APIKEY0001, issuerId: 99999999-2222-3333-4444-555555555555, file: \(setup.directory.path)/api.p8, baseURL: "http://127.0.0.1:\(port)"}
            retentionMessaging:
              realtimeURL: https://reclaim.example.com/v1/apple/retention-messaging
              messages:
                - id: \(welcome)
                  header: Before you go
                  body: Your plan keeps your history and your streak.
                  image: {id: \(picture), file: \(setup.directory.path)/wide.png, altText: A calendar with a streak}
                - id: \(discount)
                  header: Stay for less
                  body: Half price for three months.
              defaults:
                - {productId: com.example.monthly, locale: en-US, message: \(welcome)}
        campaigns:
          - id: cancel-sheet
            app: com.example.app
            trigger: RETENTION_MESSAGING
            conditions: {products: \(products)}
            variants:
              - {id: message, message: \(campaignMessage)}
        """
    }

    @Test(
        "apply while in review leaves defaults for later and check fails; after approval apply sets them; again sends nothing; a rejected message fails check naming campaign and arm; the test passes with Apple's figures"
    )
    func applyAndCheck() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        try Self.png(width: 3840, height: 400).write(to: setup.directory.appendingPathComponent("wide.png"))
        let standIn = setup.standIn()
        let app = Application(router: standIn.router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { http in
            let port = try #require(http.port)
            try await withTestDatabase { _, url in
                let config = try ReclaimConfig.parse(yaml: Self.yaml(setup, port: port))
                let lines = LineCollector()
                let first = try await MessagingTasks.apply(
                    config: config,
                    url: url,
                    app: "com.example.app",
                    environment: "Production",
                    logger: logger
                ) {
                    lines.append($0)
                }
                #expect(first.count == 1 && first[0].environment == "Production")
                #expect(standIn.images.withLock { $0 } == [Self.picture: "PENDING"])
                #expect(Set(standIn.messages.withLock { $0 }.keys) == [Self.welcome, Self.discount])
                #expect(standIn.realtimeURL.withLock { $0 } == "https://reclaim.example.com/v1/apple/retention-messaging")
                #expect(standIn.defaults.withLock { $0 }.isEmpty)
                #expect(lines.all.contains { $0.contains("waiting") && $0.contains("PENDING") }, "\(lines.all)")
                // Apple's own model reads each uploaded body.
                let bodies = standIn.messageBodies.withLock { Array($0.values) }
                #expect(try await Self.checkWithApplesModel(bodies) == 2)
                // In review: campaigns check fails on the campaign's message.
                await #expect(throws: ConfigError.self) { _ = try await CampaignTasks.check(config, logger: logger) }

                // Apple approves them.
                standIn.messages.withLock { for key in $0.keys { $0[key] = "APPROVED" } }
                _ = try await MessagingTasks.apply(config: config, url: url, app: "com.example.app", environment: "Production", logger: logger) { _ in
                }
                #expect(standIn.defaults.withLock { $0 } == ["com.example.monthly en-US": Self.welcome])
                let before = standIn.received.count
                let again = try await MessagingTasks.apply(
                    config: config,
                    url: url,
                    app: "com.example.app",
                    environment: "Production",
                    logger: logger
                ) { _ in
                }
                #expect(again[0].changes.isEmpty && again[0].waiting.isEmpty)
                let writes = standIn.received.dropFirst(before).filter { $0.method != "GET" }
                #expect(writes.isEmpty, "the third apply sent \(writes.map { "\($0.method) \($0.path)" })")
                #expect(try await CampaignTasks.check(config, logger: logger).contains("1 campaign OK"))

                let status = try await MessagingTasks.status(config: config, url: url, app: "com.example.app", environment: nil, logger: logger)
                #expect(status.contains("  message \(Self.discount): APPROVED"), "\(status)")
                #expect(status.contains("  default com.example.monthly en-US: \(Self.welcome)"), "\(status)")
                #expect(status.contains("  realtime URL: https://reclaim.example.com/v1/apple/retention-messaging"), "\(status)")

                // Apple rejects the campaign's message: check names the campaign and its arm.
                standIn.messages.withLock { $0[Self.discount] = "REJECTED" }
                do {
                    _ = try await CampaignTasks.check(config, logger: logger)
                    Issue.record("campaigns check passed with a rejected message")
                } catch {
                    #expect("\(error)".contains("campaign cancel-sheet variant message") && "\(error)".contains("REJECTED"), "\(error)")
                }

                let printed = LineCollector()
                let config2 = try ReclaimConfig.parse(
                    yaml: Self.yaml(setup, port: port).replacingOccurrences(of: "[Production]", with: "[Production, Sandbox]")
                )
                let passed = try await MessagingTasks.test(
                    config: config2,
                    url: url,
                    app: "com.example.app",
                    originalTransactionId: "2000000000000001",
                    poll: .milliseconds(100),
                    logger: logger
                ) { printed.append($0) }
                #expect(passed)
                #expect(printed.all.contains { $0.hasPrefix("PASS: success rate 100%") && $0.contains("p99 90 ms") }, "\(printed.all)")
            }
        }
    }

    @Test(
        "apply converges: --environment required; a lost answer's 409 counts as uploaded; a changed text under an uploaded id refused; REJECTED and outside uploads reported"
    )
    func converges() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        try Self.png(width: 3840, height: 400).write(to: setup.directory.appendingPathComponent("wide.png"))
        let standIn = setup.standIn()
        // The discount message's first upload lands at Apple, but its answer is lost; the client sends it again.
        standIn.loseUploadAnswers.withLock { $0.insert(Self.discount) }
        let app = Application(router: standIn.router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { http in
            let port = try #require(http.port)
            try await withTestDatabase { _, url in
                let config = try ReclaimConfig.parse(yaml: Self.yaml(setup, port: port))
                await #expect(throws: ConfigError.self) {
                    _ = try await MessagingTasks.apply(config: config, url: url, app: "com.example.app", environment: nil, logger: logger) { _ in }
                }
                let lines = Mutex<[String]>([])
                _ = try await MessagingTasks.apply(config: config, url: url, app: "com.example.app", environment: "Production", logger: logger) {
                    line in lines.withLock { $0.append(line) }
                }
                #expect(
                    lines.withLock { $0 }.contains { $0.contains("already at Apple (an earlier attempt's answer was lost)") },
                    "\(lines.withLock { $0 })"
                )
                #expect(standIn.messages.withLock { $0.count } == 2)
                // The same id with another text: refused, naming what to do.
                let changed = try ReclaimConfig.parse(
                    yaml: Self.yaml(setup, port: port).replacingOccurrences(of: "Half price for three months.", with: "Half price for six months.")
                )
                let plans = try await MessagingTasks.plan(config: changed, url: url, app: "com.example.app", environment: nil, logger: logger)
                #expect(plans.first?.refused.first?.contains("a new id") == true, "\(plans)")
                do {
                    _ = try await MessagingTasks.apply(config: changed, url: url, app: "com.example.app", environment: "Production", logger: logger) {
                        _ in
                    }
                    Issue.record("a changed text under an uploaded id was applied")
                } catch {
                    #expect("\(error)".contains("changed in the config since Reclaim uploaded it"), "\(error)")
                }
                // Apple rejects the welcome message; a message of the same app uploaded by someone else appears.
                standIn.messages.withLock {
                    $0[Self.welcome] = "REJECTED"
                    $0["5f0c3e2a-9b1d-4c6e-8a7f-1d2e3f4a5b77"] = "APPROVED"
                }
                let outside = try ReclaimConfig.parse(
                    yaml: Self.yaml(setup, port: port).replacingOccurrences(
                        of: "5f0c3e2a-9b1d-4c6e-8a7f-1d2e3f4a5b02",
                        with: "5f0c3e2a-9b1d-4c6e-8a7f-1d2e3f4a5b77"
                    )
                )
                let plan = try #require(
                    try await MessagingTasks.plan(config: outside, url: url, app: "com.example.app", environment: nil, logger: logger).first
                )
                #expect(plan.notes.contains { $0.contains("REJECTED in Apple's review") && $0.contains("new id") }, "\(plan.notes)")
                #expect(plan.waiting.contains { $0.contains("REJECTED at Apple and will never be set") }, "\(plan.waiting)")
                #expect(
                    plan.notes.contains { $0.contains("5f0c3e2a-9b1d-4c6e-8a7f-1d2e3f4a5b77") && $0.contains("uploaded outside Reclaim") },
                    "\(plan.notes)"
                )
            }
        }
    }

    @Test(
        "a 409 on Reclaim's first upload of an id is an upload made outside Reclaim: said so, not recorded as Reclaim's (it was counted as a lost answer's)"
    )
    func conflictWithoutAnAttemptOfReclaims() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        try Self.png(width: 3840, height: 400).write(to: setup.directory.appendingPathComponent("wide.png"))
        let standIn = setup.standIn()
        // Someone else uploaded the discount message after Reclaim read Apple's list.
        standIn.messages.withLock { $0[Self.discount] = "APPROVED" }
        standIn.unlistedMessages.withLock { $0.insert(Self.discount) }
        let app = Application(router: standIn.router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { http in
            let port = try #require(http.port)
            try await withTestDatabase { client, url in
                let config = try ReclaimConfig.parse(yaml: Self.yaml(setup, port: port))
                let lines = Mutex<[String]>([])
                _ = try await MessagingTasks.apply(config: config, url: url, app: "com.example.app", environment: "Production", logger: logger) {
                    line in lines.withLock { $0.append(line) }
                }
                let said = lines.withLock { $0 }
                #expect(said.contains { $0.contains("\(Self.discount) was uploaded outside Reclaim") }, "\(said)")
                #expect(!said.contains { $0.contains("an earlier attempt's answer was lost") }, "\(said)")
                #expect(
                    try await firstInt(client, "SELECT count(*)::int FROM reclaim.messaging_uploads WHERE id = '\(Self.discount)'") == 0,
                    "recorded as Reclaim's upload"
                )
            }
        }
    }

    @Test(
        "every value checked before anything is sent, each problem naming its key: lengths, UUIDs, locales, PNG size and transparency, undeclared messages, missing defaults"
    )
    func checkedFirst() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        try Self.png(width: 3840, height: 400).write(to: setup.directory.appendingPathComponent("wide.png"))
        func problems(_ yaml: String) -> String {
            do {
                _ = try ReclaimConfig.parse(yaml: yaml)
                return ""
            } catch { return "\(error)" }
        }
        let valid = Self.yaml(setup, port: 1)
        #expect(problems(valid).isEmpty, "\(problems(valid))")
        #expect(
            problems(valid.replacingOccurrences(of: "Stay for less", with: String(repeating: "x", count: 67))).contains(
                "67 characters; Apple takes 1 to 66"
            )
        )
        #expect(problems(valid.replacingOccurrences(of: "locale: en-US", with: "locale: english")).contains("english is not a locale"))
        #expect(problems(valid.replacingOccurrences(of: "id: \(Self.discount)", with: "id: not-a-uuid")).contains("not a UUID"))
        #expect(problems(valid.replacingOccurrences(of: "https://reclaim", with: "http://reclaim")).contains("https://"))
        let parsed = try #require(try ReclaimConfig.parse(yaml: valid).apps.first?.retentionMessaging)
        #expect(parsed.imageProblems().isEmpty)
        try Self.png(width: 3840, height: 400, colorType: 6).write(to: setup.directory.appendingPathComponent("wide.png"))
        #expect(
            parsed.imageProblems().first?.contains("image \(setup.directory.path)/wide.png: it has transparency") == true,
            "\(parsed.imageProblems())"
        )
        try Self.png(width: 1024, height: 400).write(to: setup.directory.appendingPathComponent("wide.png"))
        #expect(parsed.imageProblems().first?.contains("3840 px wide") == true)
        try Data("GIF89a".utf8).write(to: setup.directory.appendingPathComponent("wide.png"))
        #expect(parsed.imageProblems().first?.contains("not a PNG") == true)
        let refused = try ReclaimConfig.parse(yaml: valid)
        await #expect(throws: ConfigError.self) { _ = try await CampaignTasks.check(refused, logger: logger) }
        try Self.png(width: 3840, height: 400).write(to: setup.directory.appendingPathComponent("wide.png"))
        #expect(
            problems(Self.yaml(setup, port: 1, campaignMessage: "5f0c3e2a-9b1d-4c6e-8a7f-1d2e3f4a5b99")).contains(
                "is not one of app com.example.app's retentionMessaging.messages"
            )
        )
        let uncovered = try ReclaimConfig.parse(yaml: Self.yaml(setup, port: 1, products: "[com.example.monthly, com.example.yearly]"))
        #expect(
            MessageApprovalCheck.missingDefaults(in: uncovered) == [
                "campaign cancel-sheet: product com.example.yearly has no default message in en-US (app com.example.app's retentionMessaging.defaults)"
            ]
        )
    }

    /// Each uploaded body through app-store-server-library's `UploadMessageRequestBody` (cattrs): the same JSON back.
    static func checkWithApplesModel(_ bodies: [String]) async throws -> Int {
        let script = #"""
            import json, sys
            from appstoreserverlibrary.models.UploadMessageRequestBody import UploadMessageRequestBody
            from appstoreserverlibrary.models.LibraryUtility import _get_cattrs_converter
            converter = _get_cattrs_converter(UploadMessageRequestBody)
            bodies = [json.loads(b) for b in json.load(sys.stdin)]
            for body in bodies:
                message = converter.structure(body, UploadMessageRequestBody)
                back = converter.unstructure(message)
                assert back == body, (back, body)
            print("checked", len(bodies))
            """#
        let run = try await Subprocess.run("/usr/bin/env", ["python3", "-c", script], input: try JSONSerialization.data(withJSONObject: bodies))
        guard run.status == 0, run.output.hasPrefix("checked ") else {
            throw PythonCrossCheck.Failure(description: "\(run.output)\(run.errors)")
        }
        return Int(run.output.dropFirst("checked ".count).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }
}
