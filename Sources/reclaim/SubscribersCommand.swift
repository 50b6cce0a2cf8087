import ArgumentParser
import Foundation
import ReclaimService
import ReclaimStore

struct SubscribersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "subscribers",
        abstract: "One subscriber's story for support, and erasure on request (docs/privacy.md).",
        subcommands: [Show.self, Forget.self, RepairRefunds.self, SetTokens.self]
    )

    /// Who: exactly one of the two identifiers, optionally one app.
    struct Who: ParsableArguments {
        @Option(help: "Apple's originalTransactionId.") var originalTransactionId: String?
        @Option(help: "The appAccountToken the app set on its purchases (a UUID).") var appAccountToken: String?
        @Option(help: "Only this app (bundle id); default every app.") var app: String?

        /// `environment` comes checked (``ReportOptions``).
        func lookup(environment: String? = nil) throws -> SubscriberLookup {
            switch (originalTransactionId, appAccountToken) {
            case (let id?, nil):
                guard SubscriberLookup.Identifier.isTransactionId(id) else {
                    throw ValidationError("--original-transaction-id must be Apple's numeric transaction id")
                }
                return SubscriberLookup(.originalTransactionId(id), bundleId: app, environment: environment)
            case (nil, let token?):
                guard let uuid = UUID(uuidString: token) else { throw ValidationError("--app-account-token must be a UUID") }
                return SubscriberLookup(.appAccountToken(uuid), bundleId: app, environment: environment)
            default:
                throw ValidationError("give one of --original-transaction-id and --app-account-token")
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Each of the subscriber's subscriptions: its state, notifications, every campaign decision with its reason (skips included), offers and what became of them, cancel-sheet decisions, refund requests, redemptions and grants."
        )
        @OptionGroup var who: Who
        /// Default: both environments. `--json`: {"subscriptions": [{originalTransactionId, environment, decisions:
        /// [{campaign, outcome, reason}], offers: [{campaign, state}], …}], …}.
        @OptionGroup var report: ReportOptions
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let lookup = try who.lookup(environment: report.environment)
            print(try await SubscriberTasks.show(lookup, json: report.json, url: try database.resolved(), logger: Bootstrap.logging()))
        }
    }

    struct Forget: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Erase the subscriber in every table (both environments): identifiers redacted or deleted, counts and reports kept, the erasure recorded without them; Apple's later notifications about them dropped. Idempotent."
        )
        @OptionGroup var who: Who
        @Flag(help: "Show the subscriptions it matches and the rows it would change per table; change and record nothing.")
        var dryRun = false
        @Flag(
            help:
                "JSON: {erasureId, subscriptions, rows: {table: count}, forgottenBefore, matched: [{bundleId, environment, originalTransactionId}], dryRun}."
        )
        var json = false
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var actor: ActorOptions

        func run() async throws {
            let lookup = try who.lookup()
            let url = try database.resolved()
            print(try await SubscriberTasks.forget(lookup, dryRun: dryRun, json: json, actor: actor.actor, url: url, logger: Bootstrap.logging()))
        }
    }

    struct RepairRefunds: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "repair-refunds",
            abstract:
                "Subscriptions on a 12-month commitment made refunded by a refund of a past billing period (before 2.1.0): rebuilt from their stored notifications, where the commitment continues (Apple: 'the commitment continues unaffected')."
        )
        @Option(help: "Only this app (bundle id); default every app.") var app: String?
        @Flag(help: "Say which would be repaired; change nothing.") var dryRun = false
        @Flag(help: "JSON: {examined, repaired: [\"ID [bundle, environment]\"], dryRun}.") var json = false
        @OptionGroup var options: ConfigOptions
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let outcome = try await RefundRepair.run(
                config: try options.load(),
                url: try database.resolved(),
                app: app,
                dryRun: dryRun,
                logger: Bootstrap.logging()
            )
            print(json ? try ReportJSON.render(outcome) : RefundRepair.text(outcome))
        }
    }

    struct SetTokens: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-tokens",
            abstract:
                "Apple's Set App Account Token for stored subscriptions whose newest purchase carries no token while an earlier one did (apps[].setAppAccountToken must be fill or correct).",
            discussion: """
                New notifications are handled by the workers as they arrive; this command is for those stored before the \
                app opted in. Family-shared purchases are never set (Apple refuses them). Each subscription and token is sent \
                once, by the workers' call lanes, paced at Apple's 20 calls a second per app; reclaim subscribers show lists them.
                """
        )
        @Option(help: "The app (bundle id).") var app: String
        @Flag(help: "Count what would be set; queue nothing.") var dryRun = false
        @OptionGroup var options: ConfigOptions
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let counts: AccountTokenBacklog.Counts
            do {
                counts = try await SubscriberTasks.setTokens(
                    app: app,
                    dryRun: dryRun,
                    config: try options.load(),
                    url: try database.resolved(),
                    logger: Bootstrap.logging()
                )
            } catch let refused as AccountTokenBacklog.Refused {
                throw ValidationError(refused.description)
            }
            print(counts.line(app: app, dryRun: dryRun))
        }
    }
}
