import ArgumentParser
import Foundation
import ReclaimService

struct AdminCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin",
        abstract: "Manage admin, support and privacy keys (the admin API and /console) and read-only console keys.",
        subcommands: [CreateKey.self, CreateConsoleKey.self, ListKeys.self]
    )

    struct CreateKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create-key",
            abstract:
                "Create an admin key, or a support or privacy key (--role); prints the key as the last line (shown once; only a hash is stored)."
        )
        @Option(
            help:
                "admin (the admin API and every console page), support (the reports and one subscriber's story) or privacy (the story and the erasure)."
        )
        var role: AdminTasks.Role = .admin
        @Option(help: "Support and privacy keys: the only app whose subscribers the key reads; omit for every app.") var bundleId: String?
        @Option(help: "A name to tell keys apart in `reclaim admin list-keys` and the audit log; defaults to the role, who made it and the date.")
        var name: String?
        @OptionGroup var database: DatabaseOptions
        /// When given (or RECLAIM_CONFIG is set), --bundle-id must be configured there.
        @OptionGroup var config: OptionalConfigOptions
        @OptionGroup var who: ActorOptions

        func run() async throws {
            let logger = Bootstrap.logging()
            let key = try await AdminTasks.createAdminKey(
                role: role,
                bundleId: bundleId,
                name: name,
                config: try config.loadIfNamed(),
                actor: who.actor,
                url: try database.resolved(),
                logger: logger
            )
            print(
                "\(role == .admin ? "Admin" : role == .support ? "Support" : "Privacy") key\(bundleId.map { " for \($0)" } ?? "") (store it now; it is not shown again):"
            )
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
        @OptionGroup var who: ActorOptions

        func run() async throws {
            let logger = Bootstrap.logging()
            let key = try await AdminTasks.createConsoleKey(
                bundleId: bundleId,
                name: name,
                config: try config.loadIfNamed(),
                actor: who.actor,
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
            abstract: "List admin, support, privacy and console keys: id, role, app, prefix, name, created, revoked. Never the key."
        )
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let lines = try await AdminTasks.listAdminKeys(url: try database.resolved(), logger: Bootstrap.logging())
            print(lines.isEmpty ? "no admin or console keys" : lines.joined(separator: "\n"))
        }
    }
}

extension AdminTasks.Role: ExpressibleByArgument {}
