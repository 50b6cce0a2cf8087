import ArgumentParser
import Foundation
import ReclaimDev
import ReclaimService
import ReclaimStore

struct DevCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dev",
        abstract:
            "Zero set-up: a private PostgreSQL under .reclaim/, the folder's config.yaml (a demo config and key when it has none), an app key per app, and the server on :8080."
    )

    @Option(help: "HTTP port.")
    var port: Int = 8080
    @Option(help: "Address to listen on; 0.0.0.0 lets a device on your network (a phone testing the app) reach it.")
    var host: String = "127.0.0.1"
    @Option(help: "Folder for the private PostgreSQL, config.yaml (yours, or a demo one written when missing) and keys.")
    var directory: String = ".reclaim"
    @Flag(
        help:
            "Once serving, post a demo subscriber's notifications for the config's first notification-triggered campaign (signed by a demo CA trusted for that app in this process only), so the printed curl returns a real offer."
    )
    var demo = false
    @Option(
        help:
            "Use this PostgreSQL instead of the private one (it is migrated). DATABASE_URL is ignored here: a URL exported for another backend must not get Reclaim's schema."
    )
    var databaseURL: String?

    func run() async throws {
        let logger = Bootstrap.logging()
        let registry = Bootstrap.metrics()
        if let exported = ProcessInfo.processInfo.environment["DATABASE_URL"], !exported.isEmpty, databaseURL == nil {
            FileHandle.standardError.write(
                Data(
                    "reclaim dev: DATABASE_URL is set and ignored; dev uses its own PostgreSQL under \(directory) (pass --database-url to use another)\n"
                        .utf8
                )
            )
        }
        let environment = DevEnvironment(root: URL(fileURLWithPath: directory), port: port, host: host, demo: demo)
        try await environment.run(databaseURL: try databaseURL.map(DatabaseURL.init), metricsRegistry: registry, logger: logger)
    }
}
