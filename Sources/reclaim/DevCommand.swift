import ArgumentParser
import Foundation
import ReclaimDev
import ReclaimService
import ReclaimStore

struct DevCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dev",
        abstract: "Zero set-up: a private PostgreSQL under .reclaim/, a demo config and key, and the server on :8080."
    )

    @Option(help: "HTTP port.")
    var port: Int = 8080
    @Option(help: "Address to listen on; 0.0.0.0 lets a device on your network (a phone testing the app) reach it.")
    var host: String = "127.0.0.1"
    @Option(help: "Folder for the private PostgreSQL, demo config and keys.")
    var directory: String = ".reclaim"
    @Flag(
        help:
            "Once serving, post a demo subscriber's notifications (signed by a demo CA the dev config trusts), so the printed curl returns a real offer."
    )
    var demo = false

    func run() async throws {
        let logger = Bootstrap.logging()
        let registry = Bootstrap.metrics()
        let explicit = ProcessInfo.processInfo.environment["DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
        let environment = DevEnvironment(root: URL(fileURLWithPath: directory), port: port, host: host, demo: demo)
        try await environment.run(databaseURL: try explicit.map(DatabaseURL.init), metricsRegistry: registry, logger: logger)
    }
}
