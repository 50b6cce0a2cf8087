import Foundation
import ReclaimDomain
import ReclaimTestSupport
import SwiftASN1
import X509

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// A `reclaim serve` child process on a port of its own, for tests that kill it with SIGKILL and start it again.
final class ServerProcess: @unchecked Sendable {
    let arguments: [String]
    let environment: [String: String]
    let port: Int
    let log: URL
    private(set) var process: Subprocess?

    init(role: String, config: URL, databaseURL: String, log: URL, logLevel: String = "warning", extraEnvironment: [String: String] = [:]) throws {
        port = try LoopbackPort.free()
        arguments = ["serve", "--role", role, "--host", "127.0.0.1", "--port", "\(port)"]
        var environment = ProcessInfo.processInfo.environment
        environment["RECLAIM_CONFIG"] = config.path
        environment["DATABASE_URL"] = databaseURL
        environment["LOG_LEVEL"] = logLevel
        environment["LOG_FORMAT"] = nil
        environment.merge(extraEnvironment) { $1 }
        self.environment = environment
        self.log = log
        FileManager.default.createFile(atPath: log.path, contents: nil)
    }

    func start() throws {
        process = try Subprocess(try Binaries.path("reclaim"), arguments, environment: environment, output: log.path)
    }

    func killNine() async {
        guard let process, process.isRunning else { return }
        process.signal(SIGKILL)
        await process.exitStatus()
    }

    var isRunning: Bool { process?.isRunning == true }

    /// The end of the process's output, for failure messages.
    func logTail(_ characters: Int = 3000) -> String {
        String(((try? String(contentsOf: log, encoding: .utf8)) ?? "").suffix(characters))
    }

    func stop() async {
        guard let process, process.isRunning else { return }
        process.signal(SIGTERM)
        await process.exitStatus()
    }

    /// For a `defer`, which cannot await: SIGKILL, and the process reaped in a task of its own.
    func killNineInBackground() {
        process?.stopInBackground(SIGKILL)
    }

    /// For a `defer`, which cannot await: SIGTERM, and the process reaped in a task of its own.
    func stopInBackground() {
        process?.stopInBackground(SIGTERM)
    }

    /// Until GET /healthz answers.
    func waitUntilUp() async throws {
        try await eventually("reclaim serve on port \(port) is up", timeout: .seconds(60), every: .milliseconds(50)) {
            var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/healthz")!)
            request.timeoutInterval = 1
            let status = try? await URLSession.shared.boundedData(for: request).1 as? HTTPURLResponse
            return status?.statusCode == 200
        }
    }
}

extension ServerProcess {
    /// An API and a worker process on one database, both started (the API up), stopped when `body` returns: the
    /// crash tests kill and restart them. `workerDatabaseURL`: the worker's own way to the database (default: the
    /// API's), as when the API goes through a pooler and the worker does not.
    static func withAPIAndWorker<T>(
        config: URL,
        databaseURL: String,
        workerDatabaseURL: String? = nil,
        logs directory: URL,
        _ body: (_ api: ServerProcess, _ worker: ServerProcess) async throws -> T
    ) async throws -> T {
        let api = try ServerProcess(role: "api", config: config, databaseURL: databaseURL, log: directory.appendingPathComponent("api.log"))
        let worker = try ServerProcess(
            role: "worker",
            config: config,
            databaseURL: workerDatabaseURL ?? databaseURL,
            log: directory.appendingPathComponent("worker.log")
        )
        try api.start()
        try worker.start()
        do {
            try await api.waitUntilUp()
            let result = try await body(api, worker)
            await api.stop()
            await worker.stop()
            return result
        } catch {
            await api.stop()
            await worker.stop()
            throw error
        }
    }
}

/// The files a test that runs `reclaim serve` processes with test-signed notifications needs: a folder of its own
/// (removed by the caller), a test CA whose root is `root.pem` there, and a fresh signing key `key.p8`.
func serverTestFiles(prefix: String, keyId: String) throws -> (directory: URL, ca: TestCertificateAuthority) {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reclaim-\(prefix)-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let ca = try TestCertificateAuthority()
    try ca.root.serializeAsPEM().pemString.write(to: directory.appendingPathComponent("root.pem"), atomically: true, encoding: .utf8)
    try SigningKey.generate(keyId: keyId).pkcs8PEM.write(to: directory.appendingPathComponent("key.p8"), atomically: true, encoding: .utf8)
    return (directory, ca)
}

/// Writes `config.yaml` into a ``serverTestFiles(prefix:keyId:)`` directory: the Sandbox app signed by its test CA,
/// `campaigns` (YAML list items under `campaigns:`, indented two spaces) and `settings` (worker and server
/// sections). Returns the file.
func writeServerConfig(in directory: URL, keyId: String, campaigns: String, settings: String) throws -> URL {
    let config = directory.appendingPathComponent("config.yaml")
    try """
    apps:
      - bundleId: com.example.app
        appAppleId: 1234567890
        environments: [Sandbox]
        issuerId: 11111111-2222-3333-4444-555555555555
        signingKeys: [{keyId: \(keyId), file: \(directory.path)/key.p8}]
        rootCertificates: [\(directory.path)/root.pem]
    campaigns:
    \(campaigns)
    \(settings)
    """.write(to: config, atomically: true, encoding: .utf8)
    return config
}

/// ``writeServerConfig(in:keyId:campaigns:settings:)`` with one campaign `retain` offering RETAIN50 when auto-renew
/// is turned off (with `campaign`'s extra lines).
func writeRetainConfig(in directory: URL, keyId: String, campaign: String = "", settings: String) throws -> URL {
    try writeServerConfig(
        in: directory,
        keyId: keyId,
        campaigns: """
              - id: retain
                app: com.example.app
                trigger: DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED
                offer: {productId: com.example.monthly, offerIdentifier: RETAIN50}
            \(campaign)
            """,
        settings: settings
    )
}
