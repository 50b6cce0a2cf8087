import ArgumentParser
import Foundation
import ReclaimService

struct AppsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apps",
        abstract: "Manage app keys for the delivery API.",
        subcommands: [CreateKey.self, List.self, RevokeKey.self]
    )

    struct CreateKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create-key",
            abstract: "Create an app key bound to one bundle id; prints the key as the last line (shown once; only a hash is stored)."
        )
        @Option(help: "The app's bundle id.") var bundleId: String
        @Option(help: "A name to tell the key apart in `reclaim apps list`, e.g. ios-production.") var name: String?
        @OptionGroup var database: DatabaseOptions
        /// When given (or RECLAIM_CONFIG is set), the app must be configured there.
        @OptionGroup var config: OptionalConfigOptions
        @OptionGroup var who: ActorOptions

        func run() async throws {
            let logger = Bootstrap.logging()
            let loaded = try config.loadIfNamed()
            let key = try await AdminTasks.createAppKey(
                bundleId: bundleId,
                name: name,
                config: loaded,
                actor: who.actor,
                url: try database.resolved(),
                logger: logger
            )
            print("App key for \(bundleId) (store it now; it is not shown again):")
            print(key)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List app keys: id, app, prefix, name, created, revoked. Never the key.")
        @Option(help: "Only this app's keys.") var bundleId: String?
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let lines = try await AdminTasks.listAppKeys(bundleId: bundleId, url: try database.resolved(), logger: Bootstrap.logging())
            print(lines.isEmpty ? "no app keys" : lines.joined(separator: "\n"))
        }
    }

    struct RevokeKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "revoke-key",
            abstract: "Revoke an app key by its id (from `reclaim apps list`); requests with it get 401 from then on."
        )
        @Argument(help: "The key's id.") var id: String
        @Flag(help: "Allow revoking an admin key (from `reclaim admin list-keys`).") var admin = false
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var who: ActorOptions

        func run() async throws {
            guard let uuid = UUID(uuidString: id) else { throw ValidationError("'\(id)' is not a key id (see `reclaim apps list`)") }
            do {
                try await AdminTasks.revokeKey(
                    id: uuid,
                    allowAdmin: admin,
                    actor: who.actor,
                    url: try database.resolved(),
                    logger: Bootstrap.logging()
                )
            } catch let refusal as AdminTasks.RevokeRefusal {
                throw ValidationError(refusal.description)
            }
            print("revoked \(uuid.uuidString.lowercased())")
        }
    }
}
