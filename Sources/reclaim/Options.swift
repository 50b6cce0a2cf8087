import ArgumentParser
import Foundation
import ReclaimService
import ReclaimStore

extension ServerRole: ExpressibleByArgument {}

/// Options shared by the commands that talk to the database.
struct DatabaseOptions: ParsableArguments {
    @Option(help: "PostgreSQL URL; defaults to $DATABASE_URL.")
    var databaseURL: String?

    func resolved() throws -> DatabaseURL {
        guard let text = databaseURL ?? ProcessInfo.processInfo.environment["DATABASE_URL"], !text.isEmpty else {
            throw ValidationError("no database: set DATABASE_URL (or pass --database-url), or use `reclaim dev` for a private PostgreSQL")
        }
        return try DatabaseURL(text)
    }
}

/// Options naming the config file.
struct ConfigOptions: ParsableArguments {
    @Option(help: "Configuration file (YAML); defaults to $RECLAIM_CONFIG.")
    var config: String?

    func load() throws -> ReclaimConfig {
        guard let path = config ?? ProcessInfo.processInfo.environment["RECLAIM_CONFIG"], !path.isEmpty else {
            throw ValidationError("no configuration: set RECLAIM_CONFIG to a YAML file (see README.md, Configuration)")
        }
        return try ReclaimConfig.load(path: path)
    }
}
