import ArgumentParser
import Foundation
import ReclaimDomain
import ReclaimService

struct WebhooksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhooks",
        abstract: "Forwarding targets and webhooks: test, list, pause, resume; make a signing secret.",
        subcommands: [Test.self, List.self, Pause.self, Resume.self, NewSecret.self]
    )

    struct Test: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "POST a signed webhook.test message to URL (with the config's secrets for that webhook, or --secret-file)."
        )
        @Argument(help: "The receiver's URL.") var url: String
        @Option(help: "A file holding the whsec_ secret to sign with (default: the config's webhook at URL).") var secretFile: String?
        @OptionGroup var config: OptionalConfigOptions

        func run() async throws {
            let logger = Bootstrap.logging()
            let result = try await WebhookTasks.sendTest(url: url, config: try config.loadIfNamed(), secretFile: secretFile, logger: logger)
            print(
                "HTTP \(result.status) in \(String(format: "%.1f", result.milliseconds)) ms (webhook-id \(result.webhookId), \(result.signatures) signature(s))"
            )
            if !result.body.isEmpty { print(result.body) }
            guard (200..<300).contains(result.status) else { throw ExitCode(1) }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every forwarding target and webhook with its backlog, failures and pause.")
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let lines = try await WebhookTasks.list(url: try database.resolved(), logger: Bootstrap.logging())
            if lines.isEmpty { print("no forwarding targets or webhooks configured") }
            for line in lines { print(line) }
        }
    }

    struct Pause: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Stop sending to the targets at URL: their messages stay queued (none lost) until resume."
        )
        @OptionGroup var target: TargetOptions

        func run() async throws { try await target.setPaused(true) }
    }

    struct Resume: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Send to the targets at URL again, starting with what queued meanwhile.")
        @OptionGroup var target: TargetOptions

        func run() async throws { try await target.setPaused(false) }
    }

    /// What pause and resume name: the target's URL, optionally one app's.
    struct TargetOptions: ParsableArguments {
        @Argument(help: "The target's URL, as configured.") var url: String
        @Option(help: "Only this app's target at URL.") var app: String?
        @OptionGroup var database: DatabaseOptions

        func setPaused(_ paused: Bool) async throws {
            let changed = try await WebhookTasks.setPaused(
                paused,
                targetURL: url,
                bundleId: app,
                url: try database.resolved(),
                logger: Bootstrap.logging()
            )
            guard !changed.isEmpty else { throw ValidationError("no configured target has that URL (reclaim webhooks list shows them)") }
            for id in changed { print("\(paused ? "paused" : "resumed") \(id)") }
        }
    }

    struct NewSecret: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "new-secret",
            abstract: "Print a new Standard Webhooks signing secret (whsec_ and 32 random bytes) for a secretFile."
        )

        func run() async throws { print(WebhookSecret.generateText()) }
    }
}
