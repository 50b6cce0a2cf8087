import Foundation
import Logging
import PostgresNIO
import Prometheus
import ReclaimDomain
import ReclaimService
import ReclaimStore
import SwiftASN1
import X509

#if canImport(Glibc)
import Glibc
#endif

/// `reclaim dev`: zero set-up. Starts (or reuses) a private PostgreSQL under `.reclaim/pg`,
/// migrates, runs the folder's `config.yaml` (a team's own, or a demo config with a freshly generated demo signing
/// key written on first run), creates an app key for each configured app, serves, and stops PostgreSQL again on Ctrl-C.
public struct DevEnvironment: Sendable {
    /// The folder everything lives in (`.reclaim` in the current directory).
    public let root: URL
    public let port: Int
    /// The address to listen on: 127.0.0.1 (this machine only) unless a device on the network must reach it.
    public let host: String
    /// Post demo notifications once serving (`reclaim dev --demo`).
    public let demo: Bool

    public static let demoBundleId = "com.example.reclaim.demo"
    public static let demoKeyId = "DEMOKEY001"
    public static let demoAppAccountToken = "00000000-0000-0000-0000-000000000051"

    public init(root: URL, port: Int, host: String = "127.0.0.1", demo: Bool = false) {
        self.root = root
        self.port = port
        self.host = host
        self.demo = demo
    }

    var configFile: URL { root.appendingPathComponent("config.yaml") }
    var keyFile: URL { root.appendingPathComponent("keys/SubscriptionKey_\(Self.demoKeyId).p8") }
    /// An app's dev key: `demo-app-key` for the demo app, `app-keys/<bundle id>` for the others.
    func appKeyFile(_ bundleId: String) -> URL {
        bundleId == Self.demoBundleId ? root.appendingPathComponent("demo-app-key") : root.appendingPathComponent("app-keys/\(bundleId)")
    }
    var consoleKeyFile: URL { root.appendingPathComponent("console-key") }
    /// The demo CA's root, trusted with `--demo` by the seeded campaign's app, in this process only; a new CA is made
    /// on every start (its keys live in memory).
    var demoRootFile: URL { root.appendingPathComponent("demo-ca-root.pem") }

    public func run(databaseURL explicitURL: DatabaseURL?, metricsRegistry: PrometheusCollectorRegistry, logger: Logger) async throws {
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        var embedded: EmbeddedPostgres?
        let url: DatabaseURL
        if let explicitURL {
            url = explicitURL
        } else {
            let postgres = EmbeddedPostgres(root: root.appendingPathComponent("pg"))
            try await postgres.initializeIfNeeded(logger: logger)
            // However Reclaim ends (Ctrl-C, a crash, kill -9), its private PostgreSQL ends with it. Claimed before
            // the start: a server left by a Reclaim that just died is taken over, not stopped under us.
            try await postgres.stopWhenProcessEnds(immediate: false)
            try await postgres.start(logger: logger)
            embedded = postgres
            url = try postgres.url(database: "reclaim")
            try await Self.createDatabaseIfMissing(url, logger: logger)
        }
        do {
            try await serve(url: url, metricsRegistry: metricsRegistry, logger: logger)
        } catch {
            try? await embedded?.stop()
            throw error
        }
        try await embedded?.stop()
        logger.info("stopped the private PostgreSQL; `reclaim dev` brings it back with the same data")
    }

    private func serve(url: DatabaseURL, metricsRegistry: PrometheusCollectorRegistry, logger: Logger) async throws {
        _ = try await Migrations.run(url, logger: logger)
        let demoCA = try TestCertificateAuthority()
        try demoCA.root.serializeAsPEM().pemString.write(to: demoRootFile, atomically: true, encoding: .utf8)
        var config = try loadOrWriteConfig()
        guard !config.apps.isEmpty else { throw ConfigError("\(configFile.path) lists no app: add one under apps (docs/configuration.md)") }
        // --demo: the config's first campaign that a notification triggers, whatever its app; in this process only,
        // that app trusts the demo CA (and accepts Sandbox), and the file is left as the team wrote it.
        let seed = demo ? try Self.demoSeed(config) : nil
        if let seed, let index = config.apps.firstIndex(where: { $0.bundleId == seed.bundleId }) {
            config.apps[index].rootCertificates.append(demoRootFile.path)
            if Self.demoEnvironment(config.apps[index]) == nil { config.apps[index].environments.append("Sandbox") }
        }
        // Every dev key on one connection: an app key for each configured app, and the console key.
        let apps = config.apps
        let (appKeys, consoleKey) = try await Database.withDatabase(url, maxConnections: 1, logger: logger) { client in
            try await client.withConnection(logger: logger) { connection in
                var keys: [(app: ReclaimConfig.App, key: String)] = []
                for app in apps {
                    let file = appKeyFile(app.bundleId)
                    keys.append((app, try await devKey(scope: .app, bundleId: app.bundleId, file: file, connection: connection, logger: logger)))
                }
                return (keys, try await devKey(scope: .console, bundleId: nil, file: consoleKeyFile, connection: connection, logger: logger))
            }
        }
        let server = ReclaimServer(config: config, databaseURL: url, role: .all, host: host, port: port)
        let base = "http://127.0.0.1:\(port)"
        let tried = appKeys.first { $0.app.bundleId == seed?.bundleId } ?? appKeys[0]
        let exposed =
            ["127.0.0.1", "localhost", "::1"].contains(host)
            ? ""
            : """

              Listening on \(host):\(port): a device on this network reaches it at http://<this machine's address>:\(port).
              Dev mode has demo keys and no TLS: use it on a network you trust, and only for testing.

            """
        try await server.run(metricsRegistry: metricsRegistry, logger: logger) {
            // Written unbuffered: when stdout is a pipe or file, a buffered print would not appear until exit.
            FileHandle.standardOutput.write(
                Data(
                    """

                    Reclaim is running (dev mode).
                      API:        \(base)
                      Health:     \(base)/healthz   \(base)/readyz   \(base)/metrics
                      Database:   \(url)
                      Config:     \(configFile.path)   (RECLAIM_CONFIG for `reclaim serve`)
                    \(Self.appLines(appKeys))
                      Console:    \(base)/console   (sign in with \(consoleKey))
                    \(exposed)
                    Try:
                      curl -s \(base)/readyz
                      curl -s -H 'Authorization: Bearer \(tried.key)' '\(base)/v1/offers?appAccountToken=\(Self.demoAppAccountToken)'

                    Ctrl-C stops Reclaim and its PostgreSQL.

                    """.utf8
                )
            )
            guard let seed else { return }
            Task { await postDemo(ca: demoCA, seed: seed, app: tried.app, base: base, logger: logger) }
        }
    }

    /// One line per app: its bundle id, its app key (what the app sends as `Authorization: Bearer`) and the key id
    /// that signs its offers.
    static func appLines(_ appKeys: [(app: ReclaimConfig.App, key: String)]) -> String {
        let width = appKeys.map(\.app.bundleId.count).max() ?? 0
        return appKeys.map { app, key in
            let label = app.bundleId == demoBundleId ? "Demo app:" : "App:"
            let signer = app.signingKeys.first.map { "   signs with key \($0.keyId)" } ?? "   no signing key: offers cannot be signed"
            return "  " + label.padding(toLength: 12, withPad: " ", startingAt: 0)
                + app.bundleId.padding(toLength: width, withPad: " ", startingAt: 0) + "   app key \(key)" + signer
        }.joined(separator: "\n")
    }

    /// The campaign `--demo` seeds a subscriber for: the first one a notification triggers.
    static func demoSeed(_ config: ReclaimConfig) throws -> DemoNotifications.CampaignSeed {
        for campaign in config.campaigns {
            guard let trigger = try? CampaignTrigger(parsing: campaign.trigger), !trigger.isCancelSheet,
                let offer = campaign.offer ?? campaign.variants?.lazy.compactMap(\.offer).first
            else { continue }
            return DemoNotifications.CampaignSeed(
                id: campaign.id,
                bundleId: campaign.app,
                productId: campaign.conditions.products?.first ?? offer.productId,
                trigger: trigger,
                holdoutPercent: campaign.holdoutPercent,
                conditions: campaign.conditions
            )
        }
        throw ConfigError("--demo seeds a subscriber for a campaign a notification triggers, and the config has none (add one: docs/campaigns.md)")
    }

    /// The environment demo notifications claim: Sandbox, or the app's first other non-Production environment.
    static func demoEnvironment(_ app: ReclaimConfig.App) -> String? {
        app.environments.contains("Sandbox") ? "Sandbox" : app.environments.first { $0 != "Production" }
    }

    /// Posts the demo subscriber's notifications and prints what happened.
    private func postDemo(
        ca: TestCertificateAuthority,
        seed: DemoNotifications.CampaignSeed,
        app: ReclaimConfig.App,
        base: String,
        logger: Logger
    ) async {
        let demo = DemoNotifications(
            ca: ca,
            campaign: seed,
            appAccountToken: Self.demoAppAccountToken,
            environment: Self.demoEnvironment(app) ?? "Sandbox"
        )
        let originalTransactionId = DemoNotifications.originalTransactionId(campaignId: seed.id, holdoutPercent: seed.holdoutPercent)
        do {
            try await Task.sleep(for: .milliseconds(500))  // the listener binds right after onReady
            let answers = try await DemoNotifications.post(
                try demo.bodies(originalTransactionId: originalTransactionId),
                to: URL(string: "\(base)/v1/apple/notifications")!
            )
            FileHandle.standardOutput.write(
                Data(
                    """
                    Demo: for campaign \(seed.id) (\(seed.bundleId)), posted SUBSCRIBED/INITIAL_BUY and \(demo.trigger) in \(demo.environment)
                      for subscription \(originalTransactionId), appAccountToken \(Self.demoAppAccountToken)
                      (signed by a demo CA that this `reclaim dev` trusts for \(seed.bundleId) only); answers: \(answers.joined(separator: ", "))
                      The worker issues the offer within a second (after the campaign's delay, if it has one); fetch it with the curl above.

                    """.utf8
                )
            )
        } catch {
            logger.error("demo notifications failed", metadata: ["error": "\(error)"])
        }
    }

    /// Writes the demo config and key when the folder has no config; later runs, and a team's own config, are read
    /// as they are (and any edits).
    func loadOrWriteConfig() throws -> ReclaimConfig {
        let fileManager = FileManager.default
        if !fileManager.fileExists(atPath: configFile.path) {
            if !fileManager.fileExists(atPath: keyFile.path) {
                try fileManager.createDirectory(at: keyFile.deletingLastPathComponent(), withIntermediateDirectories: true)
                let key = SigningKey.generate(keyId: Self.demoKeyId)
                try Self.writeSecret(Data(key.pkcs8PEM.utf8), to: keyFile)
            }
            try Data(Self.demoConfig(keyFile: keyFile.path).utf8).write(to: configFile, options: .atomic)
        }
        return try ReclaimConfig.load(path: configFile.path)
    }

    static func demoConfig(keyFile: String) -> String {
        """
        # Demo configuration written by `reclaim dev`. Edit freely; every key: docs/configuration.md.
        apps:
          - bundleId: \(demoBundleId)
            environments: [Sandbox, Xcode, LocalTesting]
            issuerId: 00000000-0000-0000-0000-000000000000
            signingKeys:
              - keyId: \(demoKeyId)
                file: \(keyFile)
        campaigns:
          - id: retain-auto-renew-off
            app: \(demoBundleId)
            trigger: DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED
            offer: { productId: com.example.reclaim.monthly, offerIdentifier: RETAIN50 }
            deliverableFor: 7d
            cooldown: 90d
            holdoutPercent: 10
            priority: 10
          - id: winback-expired
            app: \(demoBundleId)
            trigger: EXPIRED/VOLUNTARY
            offer: { productId: com.example.reclaim.monthly, offerIdentifier: WINBACK30 }
            deliverableFor: 14d
            cooldown: 180d
            holdoutPercent: 10
            priority: 5

        """
    }

    /// A dev key (the demo app key, the console key): created once and kept in `.reclaim/` (dev only; production
    /// keys are shown once).
    private func devKey(
        scope: APIKeyStore.Scope,
        bundleId: String?,
        file: URL,
        connection: PostgresConnection,
        logger: Logger
    ) async throws
        -> String
    {
        if let key = try? String(contentsOf: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines), !key.isEmpty {
            let caller = try await APIKeyStore.authenticate(key, connection: connection, logger: logger)
            if caller?.scope == scope && caller?.bundleId == bundleId { return key }
        }
        let key = try await APIKeyStore.create(scope: scope, bundleId: bundleId, name: "reclaim dev", connection: connection, logger: logger)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Self.writeSecret(Data(key.utf8), to: file)
        return key
    }

    /// Writes a secret (a key) readable by its owner only, from the moment the file exists: created with mode
    /// 0600 and the contents in one step, never world-readable in between.
    static func writeSecret(_ data: Data, to file: URL) throws {
        try? FileManager.default.removeItem(at: file)
        let fd = open(file.path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard fd >= 0 else { throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: file.path]) }
        defer { close(fd) }
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == data.count else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: file.path]) }
    }

    /// Creates the database named in `url` on its server, if it does not exist yet.
    static func createDatabaseIfMissing(_ url: DatabaseURL, logger: Logger) async throws {
        try await Database.withDatabase(url.with(database: "postgres"), maxConnections: 1, logger: logger) { client in
            let rows = try await client.query("SELECT 1 FROM pg_database WHERE datname = \(url.database)", logger: logger)
            for try await _ in rows { return }
            try await client.query(
                PostgresQuery(unsafeSQL: "CREATE DATABASE \"\(url.database.replacingOccurrences(of: "\"", with: "\"\""))\""),
                logger: logger
            )
        }
    }
}
