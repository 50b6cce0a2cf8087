import ArgumentParser
import Foundation
import ReclaimService

struct AppsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apps",
        abstract: "Manage app keys for the delivery API.",
        subcommands: [CreateKey.self]
    )

    struct CreateKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create-key",
            abstract: "Create an app key bound to one bundle id; prints the key as the last line (shown once)."
        )
        @Option(help: "The app's bundle id.") var bundleId: String
        @OptionGroup var database: DatabaseOptions
        @Option(help: "Configuration file; when given (or RECLAIM_CONFIG is set) the app must be configured there.")
        var config: String?

        func run() async throws {
            let logger = Bootstrap.logging()
            let path = config ?? ProcessInfo.processInfo.environment["RECLAIM_CONFIG"]
            let loaded = try path.map { try ReclaimConfig.load(path: $0) }
            let key = try await AdminTasks.createAppKey(bundleId: bundleId, config: loaded, url: try database.resolved(), logger: logger)
            print("App key for \(bundleId) (store it now; it is not shown again):")
            print(key)
        }
    }
}
