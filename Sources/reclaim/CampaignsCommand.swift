import ArgumentParser
import Foundation
import ReclaimDomain
import ReclaimService

struct CampaignsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "campaigns",
        abstract: "Check the campaign config, try it on a folder of notifications, report on it, or switch a campaign off and on.",
        subcommands: [Check.self, Simulate.self, Report.self, Pause.self, Resume.self, Withdraw.self, Paused.self]
    )

    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate the config and its signing keys; list the campaigns. Exit 1 with every problem when invalid."
        )
        @OptionGroup var config: ConfigOptions
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            // Read only when a campaign hands out offer codes (their pools are in the database).
            print(try await CampaignTasks.check(try config.load(), database: try database.resolvedIfGiven()))
        }
    }

    struct Simulate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Replay a folder of notifications (bodies or bare JWS) through state and rules, without a database, and print per subscriber what would be offered and why."
        )
        @Argument(help: "Folder of notification files (.json bodies {\"signedPayload\": …} or .jws).")
        var directory: String
        @Option(help: "Evaluate as of this ISO 8601 time instead of each notification's own signedDate.")
        var now: String?
        @OptionGroup var config: ConfigOptions

        func run() async throws {
            var at: Date?
            if let now {
                guard let date = try? Date(now, strategy: .iso8601) else {
                    throw ValidationError("--now must be an ISO 8601 time such as 2026-12-01T00:00:00Z")
                }
                at = date
            }
            print(try await CampaignTasks.simulate(try config.load(), directory: URL(fileURLWithPath: directory), now: at))
        }
    }

    struct Report: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Each campaign (each variant of an experiment) against its holdout: group sizes, redemption and 30-day retention with 95% intervals, the lift and whether it is real (reclaim.campaign_variant_lift)."
        )
        @Option(help: "Only this campaign.") var campaign: String?
        @Option(help: "Only subscribers first triggered within this long, e.g. 30d; default all time.") var since: String?
        /// Default: Production, never the two environments summed.
        @OptionGroup var report: ReportOptions
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let (environment, json) = (report.environment ?? "Production", report.json)
            var start: Date?
            if let since {
                guard let seconds = DurationText.seconds(since), seconds > 0 else { throw ValidationError("--since must be a duration such as 30d") }
                start = Date().addingTimeInterval(-Double(seconds))
            }
            print(
                try await CampaignTasks.report(
                    campaign: campaign,
                    environment: environment,
                    since: start,
                    json: json,
                    url: try database.resolved(),
                    logger: Bootstrap.logging()
                )
            )
        }
    }

    struct Pause: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Switch a campaign off at once on every server, without a restart: it decides nothing and its offers are not handed out (the cancel sheet falls through) until resume."
        )
        @Argument(help: "The campaign's id.") var campaign: String
        @Option(help: "Why, kept beside the switch (reclaim campaigns paused shows it).") var reason: String?
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var who: ActorOptions

        func run() async throws {
            print(
                try await CampaignSwitchTasks.setPaused(
                    true,
                    campaignId: campaign,
                    reason: reason,
                    actor: who.actor,
                    url: try database.resolved(),
                    logger: Bootstrap.logging()
                )
            )
        }
    }

    struct Resume: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Switch a paused campaign on again.")
        @Argument(help: "The campaign's id.") var campaign: String
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var who: ActorOptions

        func run() async throws {
            print(
                try await CampaignSwitchTasks.setPaused(
                    false,
                    campaignId: campaign,
                    reason: nil,
                    actor: who.actor,
                    url: try database.resolved(),
                    logger: Bootstrap.logging()
                )
            )
        }
    }

    struct Withdraw: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Pause a campaign and end its live offers for good (withdrawn, with the reason; offer.withdrawn webhooks); resume never revives them."
        )
        @Argument(help: "The campaign's id.") var campaign: String
        @Option(help: "Why, kept with the switch and each offer's end reason.") var reason: String?
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var who: ActorOptions

        func run() async throws {
            print(
                try await CampaignSwitchTasks.withdraw(
                    campaignId: campaign,
                    reason: reason,
                    actor: who.actor,
                    url: try database.resolved(),
                    logger: Bootstrap.logging()
                )
            )
        }
    }

    struct Paused: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the campaigns switched off, with when and why.")
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let lines = try await CampaignSwitchTasks.paused(url: try database.resolved(), logger: Bootstrap.logging())
            print(lines.isEmpty ? "no campaign is paused" : lines.joined(separator: "\n"))
        }
    }
}
