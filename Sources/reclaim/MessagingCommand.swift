import ArgumentParser
import Foundation
import ReclaimService

struct MessagingCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "messaging",
        abstract:
            "An app's Retention Messaging set-up at Apple (apps[].retentionMessaging): messages, images, default messages, the realtime URL, the performance test.",
        subcommands: [Plan.self, Apply.self, Status.self, Test.self]
    )

    struct Target: ParsableArguments {
        @Option(help: "The app (bundle id).") var app: String
        @Option(help: "Sandbox or Production (Apple keeps each apart). Required by apply; plan and status show each the app accepts, Sandbox first.")
        var environment: String?
        @OptionGroup var configOptions: ConfigOptions
        @OptionGroup var database: DatabaseOptions
    }

    struct Plan: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print what apply would change against Apple's current lists; send nothing.")
        @OptionGroup var target: Target

        func run() async throws {
            let plans = try await MessagingTasks.plan(
                config: try target.configOptions.load(),
                url: try target.database.resolved(),
                app: target.app,
                environment: target.environment,
                logger: Bootstrap.logging()
            )
            for plan in plans {
                print("\(plan.environment): \(plan.changes.isEmpty ? "nothing to change" : "\(plan.changes.count) change(s)")")
                for change in plan.changes { print("  \(change)") }
                for line in plan.waiting { print("  waiting: \(line)") }
                for line in plan.notes { print("  note: \(line)") }
                for line in plan.refused { print("  refused: \(line)") }
            }
        }
    }

    struct Apply: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Make Apple hold what the config declares, idempotently: upload what Apple lacks, set defaults whose message Apple approved, set the realtime URL; delete nothing."
        )
        @OptionGroup var target: Target
        @OptionGroup var who: ActorOptions

        func run() async throws {
            let (url, logger) = (try target.database.resolved(), Bootstrap.logging())
            let config = try target.configOptions.load()
            let environment = target.environment
            _ = try await Audit.recording(
                "messaging.apply",
                target: .text("app:\(target.app)"),
                detail: environment.map { "environment \($0)" },
                actor: who.actor,
                url: url,
                logger: logger
            ) {
                try await MessagingTasks.apply(config: config, url: url, app: target.app, environment: environment, logger: logger) { print($0) }
            }
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Each message's and image's review state, each default message, the realtime URL.")
        @OptionGroup var target: Target

        func run() async throws {
            let lines = try await MessagingTasks.status(
                config: try target.configOptions.load(),
                url: try target.database.resolved(),
                app: target.app,
                environment: target.environment,
                logger: Bootstrap.logging()
            )
            for line in lines { print(line) }
        }
    }

    struct Test: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Run Apple's performance test of the realtime URL (Sandbox), poll it and print Apple's figures; exit 1 unless it passes. Apple requires a pass before a production URL."
        )
        @Option(help: "The app (bundle id).") var app: String
        @Option(help: "The original transaction id of an active auto-renewable subscription made in Sandbox.") var transaction: String
        @OptionGroup var configOptions: ConfigOptions
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let passed = try await MessagingTasks.test(
                config: try configOptions.load(),
                url: try database.resolved(),
                app: app,
                originalTransactionId: transaction,
                logger: Bootstrap.logging()
            ) { print($0) }
            if !passed { throw ExitCode(1) }
        }
    }
}
