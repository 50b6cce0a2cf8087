import ArgumentParser
import Foundation
import ReclaimStore

/// Options shared by the commands that talk to the database.
struct DatabaseOptions: ParsableArguments {
    @Option(
        help: """
            PostgreSQL URL; defaults to $DATABASE_URL. Prefer the environment variable: a password on the command line \
            is visible to every user of the machine in `ps`.
            """
    )
    var databaseURL: String?

    func resolved() throws -> DatabaseURL {
        guard let text = databaseURL ?? ProcessInfo.processInfo.environment["DATABASE_URL"], !text.isEmpty else {
            throw ValidationError("no database: set DATABASE_URL (or pass --database-url), or use `reclaim dev` for a private PostgreSQL")
        }
        let url = try DatabaseURL(text)
        if databaseURL != nil, url.password != nil {
            warn("--database-url carries a password, which other users can read in `ps`; set DATABASE_URL instead")
        }
        if let warning = url.sslModeWarning { warn(warning) }
        return url
    }

    /// The database when one is named, for commands that use it only for some configs.
    func resolvedIfGiven() throws -> DatabaseURL? {
        guard let text = databaseURL ?? ProcessInfo.processInfo.environment["DATABASE_URL"], !text.isEmpty else { return nil }
        return try resolved()
    }

    private func warn(_ message: String) {
        FileHandle.standardError.write(Data("warning: \(message)\n".utf8))
    }
}
