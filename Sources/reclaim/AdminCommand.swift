import ArgumentParser
import ReclaimService

struct AdminCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin",
        abstract: "Manage admin keys for the admin API.",
        subcommands: [CreateKey.self]
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
}
