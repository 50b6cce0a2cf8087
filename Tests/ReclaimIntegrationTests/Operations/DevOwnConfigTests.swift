import Foundation
import PostgresNIO
import ReclaimDomain
import ReclaimStore
import ReclaimTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Issue 52: `reclaim dev` on a team's own `config.yaml` (their apps and keys, no demo app) prints each app's key on
/// its app's line, and `--demo` seeds a subscriber for the config's first notification-triggered campaign, whatever
/// its app, trusting the demo CA for that app in this process only.
@Suite("reclaim dev runs a team's own config", .poolWatchdog)
struct DevOwnConfigTests {
    static let config = """
        apps:
          - bundleId: com.acme.one
            environments: [Production, Sandbox]
            appAppleId: 123456
            signingKeys: [{ keyId: BD3A7A04, file: KEYS/one.p8, xcode: true }]   # Xcode's Subscription Offers Key
          - bundleId: com.acme.two
            environments: [Sandbox]
            issuerId: 11111111-2222-3333-4444-555555555555
            signingKeys: [{ keyId: TWOKEY0001, file: KEYS/two.p8 }]
        campaigns:
          - id: cancel-sheet
            app: com.acme.one
            trigger: RETENTION_MESSAGING
            message: 0c3e1c4a-2f4e-4f9b-9a59-2b7d2c1e0f11
          - id: winback
            app: com.acme.two
            trigger: EXPIRED/VOLUNTARY
            offer: { productId: com.acme.two.yearly, offerIdentifier: BACK40 }
            conditions: { storefronts: [FRA], minimumTenure: 30d, expirationIntents: [1] }
            deliverableFor: 7d
            cooldown: 30d
            holdoutPercent: 10

        """

    static func offers(port: Int, key: String, token: String = "00000000-0000-0000-0000-000000000051") async throws -> (Int, [String: Any]) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/v1/offers?appAccountToken=\(token)")!)
        request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
        request.timeoutInterval = 5
        let (data, response) = try await URLSession.shared.boundedData(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:])
    }

    @Test("two apps, no demo: a line per app with its key; --demo issues the second app's campaign offer")
    func teamConfig() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("reclaim-dev-own-\(UUID().uuidString.prefix(8))")
        let folder = root.appendingPathComponent("D")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        chmod(root.path, 0o755)  // the cluster runs as the postgres user when the tests run as root
        chmod(folder.path, 0o755)
        defer { try? FileManager.default.removeItem(at: root) }
        for (name, keyId) in [("one", "ONEKEY0001"), ("two", "TWOKEY0001")] {
            try SigningKey.generate(keyId: keyId).pkcs8PEM.write(to: root.appendingPathComponent("\(name).p8"), atomically: true, encoding: .utf8)
        }
        let configText = Self.config.replacingOccurrences(of: "KEYS", with: root.path)
        try configText.write(to: folder.appendingPathComponent("config.yaml"), atomically: true, encoding: .utf8)
        let log = root.appendingPathComponent("dev.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)

        let port = try LoopbackPort.free()
        var environment = ProcessInfo.processInfo.environment
        environment["DATABASE_URL"] = ""
        let dev = try Subprocess(
            try Binaries.path("reclaim"),
            ["dev", "--directory", "D", "--port", "\(port)", "--demo"],
            environment: environment,
            directory: root.path,
            output: log.path
        )
        defer { dev.signal(SIGINT) }
        try await eventually("reclaim dev posts the demo (or ends)", timeout: .seconds(120), every: .milliseconds(200)) {
            ((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains("Demo: ") || !dev.isRunning
        }
        let output = try String(contentsOf: log, encoding: .utf8)
        try #require(dev.isRunning, "reclaim dev ended:\n\(output)")
        var keys: [String: String] = [:]
        for bundleId in ["com.acme.one", "com.acme.two"] {
            let line = try #require(
                output.split(separator: "\n").first { $0.contains(bundleId) && $0.contains("rk_app_") },
                "no line names \(bundleId) and a key:\n\(output)"
            )
            keys[bundleId] = try #require(line.split(separator: " ").first { $0.hasPrefix("rk_app_") }).description
            #expect(line.contains(bundleId == "com.acme.one" ? "signs with key BD3A7A04" : "signs with key TWOKEY0001"), "\(line)")
        }
        #expect(!output.contains("com.example.reclaim.demo"), "the demo app is printed though the config has none")
        #expect(output.contains("Demo: for campaign winback (com.acme.two), posted SUBSCRIBED/INITIAL_BUY and EXPIRED/VOLUNTARY"))

        // The seeded app's key fetches the offer signed with its own key, for the campaign whose conditions it meets.
        let two = try #require(keys["com.acme.two"])
        var offer: [String: Any] = [:]
        try await eventually("the worker issues the demo offer", timeout: .seconds(30), every: .milliseconds(200)) {
            guard let (status, body) = try? await Self.offers(port: port, key: two), status == 200,
                let first = (body["offers"] as? [[String: Any]])?.first
            else { return false }
            offer = first
            return true
        }
        #expect(offer["campaign"] as? String == "winback")
        #expect(offer["productIdentifier"] as? String == "com.acme.two.yearly")
        #expect((offer["storeKit1"] as? [String: Any])?["keyIdentifier"] as? String == "TWOKEY0001")
        // The other app's key is its own: accepted, and it sees none of the second app's offers.
        let (oneStatus, oneBody) = try await Self.offers(port: port, key: try #require(keys["com.acme.one"]))
        #expect(oneStatus == 200)
        #expect((oneBody["offers"] as? [Any])?.isEmpty == true)
        // The demo CA was trusted in the process only: the team's file is as they wrote it.
        #expect(try String(contentsOf: folder.appendingPathComponent("config.yaml"), encoding: .utf8) == configText)

        dev.signal(SIGINT)
        try await eventually("reclaim dev stops on Ctrl-C", timeout: .seconds(30), every: .milliseconds(100)) { !dev.isRunning }
        // A second run reuses each app's key.
        let again = try Subprocess(
            try Binaries.path("reclaim"),
            ["dev", "--directory", "D", "--port", "\(port)"],
            environment: environment,
            directory: root.path,
            output: root.appendingPathComponent("dev2.log").path
        )
        defer { again.signal(SIGINT) }
        try await eventually("the second run is ready", timeout: .seconds(120), every: .milliseconds(200)) {
            ((try? String(contentsOf: root.appendingPathComponent("dev2.log"), encoding: .utf8)) ?? "").contains("Ctrl-C stops")
        }
        let second = try String(contentsOf: root.appendingPathComponent("dev2.log"), encoding: .utf8)
        #expect(second.contains(try #require(keys["com.acme.one"])) && second.contains(two), "the second run made new app keys")
        again.signal(SIGINT)
        try await eventually("the second run stops on Ctrl-C", timeout: .seconds(30), every: .milliseconds(100)) { !again.isRunning }
    }

    @Test("a DATABASE_URL exported in the shell is ignored, with a line saying so: that database stays untouched")
    func exportedDatabaseURLIgnored() async throws {
        try await withTestDatabase(migrated: false) { other, url in
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("reclaim-dev-url-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            chmod(root.path, 0o755)  // the cluster runs as the postgres user when the tests run as root
            defer { try? FileManager.default.removeItem(at: root) }
            let log = root.appendingPathComponent("dev.log")
            var environment = ProcessInfo.processInfo.environment
            environment["DATABASE_URL"] = url.connectionString
            let dev = try Subprocess(
                try Binaries.path("reclaim"),
                ["dev", "--directory", "D", "--port", "\(try LoopbackPort.free())"],
                environment: environment,
                directory: root.path,
                output: log.path
            )
            defer { dev.signal(SIGINT) }
            try await eventually("reclaim dev is ready (or ends)", timeout: .seconds(120), every: .milliseconds(200)) {
                ((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains("Ctrl-C stops") || !dev.isRunning
            }
            let output = try String(contentsOf: log, encoding: .utf8)
            try #require(dev.isRunning, "reclaim dev ended:\n\(output)")
            #expect(output.contains("DATABASE_URL is set and ignored"), "\(output)")
            let rows = try await other.query("SELECT count(*) FROM pg_namespace WHERE nspname = 'reclaim'", logger: TestPostgres.logger)
            for try await count in rows.decode(Int64.self) { #expect(count == 0, "reclaim dev created its schema in the exported database") }
            dev.signal(SIGINT)
            try await eventually("reclaim dev stops on Ctrl-C", timeout: .seconds(30), every: .milliseconds(100)) { !dev.isRunning }
        }
    }
}
