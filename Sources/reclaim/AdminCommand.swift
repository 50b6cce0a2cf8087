import ArgumentParser
import Foundation
import ReclaimService

struct AdminCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin",
        abstract: "Manage admin keys (admin API and /console) and read-only console keys.",
        subcommands: [CreateKey.self, CreateConsoleKey.self, ListKeys.self]
    )

    struct CreateKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create-key",
            abstract: "Create an admin key; prints the key as the last line (shown once)."
        )
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let logger = Bootstrap.logging()
            let key = try await AdminTasks.createAdminKey(url: try database.resolved(), logger: logger)
            print("Admin key (store it now; it is not shown again):")
            print(key)
        }
    }

    struct CreateConsoleKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create-console-key",
            abstract: "Create a read-only key for /console, of one app (--bundle-id) or every app; prints it as the last line (shown once)."
        )
        @Option(help: "The only app whose numbers the key shows; omit for every app.") var bundleId: String?
        @Option(help: "A name to tell keys apart in `reclaim admin list-keys`.") var name: String?
        @OptionGroup var database: DatabaseOptions
        /// When given (or RECLAIM_CONFIG is set), the app must be configured there.
        @OptionGroup var config: OptionalConfigOptions

        func run() async throws {
            let logger = Bootstrap.logging()
            let key = try await AdminTasks.createConsoleKey(
                bundleId: bundleId,
                name: name,
                config: try config.loadIfNamed(),
                url: try database.resolved(),
                logger: logger
            )
            print("Console key for \(bundleId ?? "every app") (store it now; it is not shown again):")
            print(key)
        }
    }

    struct ListKeys: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list-keys",
            abstract: "List admin and console keys: id, scope, app, prefix, name, created, revoked. Never the key."
        )
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let lines = try await AdminTasks.listAdminKeys(url: try database.resolved(), logger: Bootstrap.logging())
            print(lines.isEmpty ? "no admin or console keys" : lines.joined(separator: "\n"))
        }
    }
}
