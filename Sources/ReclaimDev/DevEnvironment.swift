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
/// migrates, writes a demo config with a freshly generated demo signing key on first run,
/// creates a demo app key, serves, and stops PostgreSQL again on Ctrl-C.
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
    var appKeyFile: URL { root.appendingPathComponent("demo-app-key") }
    var consoleKeyFile: URL { root.appendingPathComponent("console-key") }
    /// The demo CA's root, trusted by the demo config only; a new CA is made on every start (its keys live in memory).
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
        let config = try loadOrWriteConfig()
        let appKey = try await devKey(scope: .app, bundleId: Self.demoBundleId, file: appKeyFile, url: url, logger: logger)
        let consoleKey = try await devKey(scope: .console, bundleId: nil, file: consoleKeyFile, url: url, logger: logger)
        let server = ReclaimServer(config: config, databaseURL: url, role: .all, host: host, port: port)
        let base = "http://127.0.0.1:\(port)"
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
                      Demo app:   \(Self.demoBundleId), demo signing key \(Self.demoKeyId)
                      App key:    \(appKey)
                      Console:    \(base)/console   (sign in with \(consoleKey))
                    \(exposed)
                    Try:
                      curl -s \(base)/readyz
                      curl -s -H 'Authorization: Bearer \(appKey)' '\(base)/v1/offers?appAccountToken=\(Self.demoAppAccountToken)'

                    Ctrl-C stops Reclaim and its PostgreSQL.

                    """.utf8
                )
            )
            guard demo else { return }
            Task { await postDemo(ca: demoCA, config: config, base: base, appKey: appKey, logger: logger) }
        }
    }

    /// Posts the demo subscriber's notifications and prints what happened.
    private func postDemo(ca: TestCertificateAuthority, config: ReclaimConfig, base: String, appKey: String, logger: Logger) async {
        let campaign = config.campaigns.first { $0.app == Self.demoBundleId && $0.trigger == "DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED" }
        let demo = DemoNotifications(
            ca: ca,
            bundleId: Self.demoBundleId,
            productId: campaign?.offer?.productId ?? "com.example.reclaim.monthly",
            appAccountToken: Self.demoAppAccountToken
        )
        let originalTransactionId = DemoNotifications.originalTransactionId(
            campaignId: campaign?.id ?? "",
            holdoutPercent: campaign?.holdoutPercent ?? 0
        )
        do {
            try await Task.sleep(for: .milliseconds(500))  // the listener binds right after onReady
            let answers = try await DemoNotifications.post(
                try demo.bodies(originalTransactionId: originalTransactionId),
                to: URL(string: "\(base)/v1/apple/notifications")!
            )
            FileHandle.standardOutput.write(
                Data(
                    """
                    Demo: posted SUBSCRIBED/INITIAL_BUY and DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED for subscription \(originalTransactionId)
                      (signed by a demo CA that only \(configFile.path) trusts); answers: \(answers.joined(separator: ", "))
                      The worker issues the offer within a second; fetch it with the curl above.
                      A 401 means the config predates --demo: add \(demoRootFile.path) to rootCertificates.

                    """.utf8
                )
            )
        } catch {
            logger.error("demo notifications failed", metadata: ["error": "\(error)"])
        }
    }

    /// Writes the demo config and key on first run; later runs reuse them (and any edits).
    func loadOrWriteConfig() throws -> ReclaimConfig {
        let fileManager = FileManager.default
        if !fileManager.fileExists(atPath: keyFile.path) {
            try fileManager.createDirectory(at: keyFile.deletingLastPathComponent(), withIntermediateDirectories: true)
            let key = SigningKey.generate(keyId: Self.demoKeyId)
            try Self.writeSecret(Data(key.pkcs8PEM.utf8), to: keyFile)
        }
        if !fileManager.fileExists(atPath: configFile.path) {
            try Data(Self.demoConfig(keyFile: keyFile.path, demoRoot: demoRootFile.path).utf8).write(to: configFile, options: .atomic)
        }
        return try ReclaimConfig.load(path: configFile.path)
    }

    static func demoConfig(keyFile: String, demoRoot: String) -> String {
        """
        # Demo configuration written by `reclaim dev`. Edit freely; every key: docs/configuration.md.
        apps:
          - bundleId: \(demoBundleId)
            environments: [Sandbox, Xcode, LocalTesting]
            issuerId: 00000000-0000-0000-0000-000000000000
            signingKeys:
              - keyId: \(demoKeyId)
                file: \(keyFile)
            rootCertificates: [\(demoRoot)]   # the demo CA of `reclaim dev --demo`; remove for real use
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
    private func devKey(scope: APIKeyStore.Scope, bundleId: String?, file: URL, url: DatabaseURL, logger: Logger) async throws -> String {
        if let key = try? String(contentsOf: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines), !key.isEmpty {
            let known = try await Database.withDatabase(url, maxConnections: 1, logger: logger) { client in
                try await client.withConnection(logger: logger) { try await APIKeyStore.authenticate(key, connection: $0, logger: logger) }?.scope
                    == scope
            }
            if known { return key }
        }
        let key = try await Database.withDatabase(url, maxConnections: 1, logger: logger) { client in
            try await client.withConnection(logger: logger) {
                try await APIKeyStore.create(scope: scope, bundleId: bundleId, name: "reclaim dev", connection: $0, logger: logger)
            }
        }
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
