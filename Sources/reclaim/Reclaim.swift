import ArgumentParser
import ReclaimService
import ReclaimStore

/// The `reclaim` command line. Each subcommand only parses its arguments and calls the service library.
@main
struct Reclaim: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reclaim",
        abstract: "Wins back and retains App Store subscribers: verified notifications in, signed offers out.",
        // The release (CHANGELOG.md), the commit built from and its Package.resolved's SHA-256 prefix (both recorded by
        // Plugins/ReclaimCommit), and the schema version it migrates to.
        version:
            "\(ReclaimVersion.current) (commit \(BuildCommit.id), schema \(Migrator.targetVersion), Package.resolved \(BuildCommit.packagesResolved))",
        subcommands: [
            DevCommand.self, ServeCommand.self, MigrateCommand.self, SignCommand.self, VerifyCommand.self, AppsCommand.self, AdminCommand.self,
            JobsCommand.self, CampaignsCommand.self, PruneCommand.self, ReconcileCommand.self, BackfillCommand.self, AppleCommand.self,
            WebhooksCommand.self, RefundsCommand.self, MessagingCommand.self, SubscribersCommand.self, CodesCommand.self, ExtensionsCommand.self,
            AuditCommand.self, StopCommand.self,
        ]
    )
}
