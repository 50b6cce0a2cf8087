import ArgumentParser
import ReclaimService
import ReclaimStore

struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Apply schema.sql to the database (idempotent; safe to run from several processes at once)."
    )

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        let logger = Bootstrap.logging()
        let outcome = try await Migrations.run(try database.resolved(), logger: logger)
        switch outcome {
        case .applied(let version): print("applied schema version \(version)")
        case .alreadyCurrent(let version): print("schema already at version \(version)")
        case .aheadCompatible(let version):
            print(
                "schema at version \(version), newer than this binary's \(Migrator.targetVersion) by additive steps only: nothing to do; this binary serves it"
            )
        }
    }
}
