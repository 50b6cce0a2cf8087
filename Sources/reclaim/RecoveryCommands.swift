import ArgumentParser
import Foundation
import ReclaimService
import ReclaimStore

#if canImport(Glibc)
import Glibc
#endif

struct ReconcileCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reconcile",
        abstract: "Fetch Apple's notification history and ingest what Reclaim missed (duplicates change nothing).",
        discussion: """
            Every app with serverAPI in RECLAIM_CONFIG, in every environment it accepts, unless --app or --environment \
            narrows it. Apple keeps 180 days of history in Production and 30 in Sandbox. Each run is recorded in \
            reclaim.reconciliation_runs.
            """
    )
    @Option(help: "How far back, e.g. 72h or 30d.") var since = "72h"
    @Option(help: "Only this app (bundle id).") var app: String?
    @Option(help: "Only this environment (Production or Sandbox).") var environment: String?
    @Flag(help: "Only notifications Apple failed to deliver.") var onlyFailures = false
    @OptionGroup var configOptions: ConfigOptions
    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        let logger = Bootstrap.logging()
        guard let window = try? ConfigDuration(parsing: since), window.seconds > 0 else {
            throw ValidationError("--since \(since): not a duration such as 72h or 30d")
        }
        let terminal = isatty(STDOUT_FILENO) == 1
        let outcomes = try await RecoveryTasks.reconcile(
            config: try configOptions.load(),
            url: try database.resolved(),
            app: app,
            environment: environment,
            since: TimeInterval(window.seconds),
            onlyFailures: onlyFailures,
            logger: logger
        ) { progress in
            let c = progress.counts
            let line = "\(progress.bundleId) \(progress.environment): page \(c.pages), \(c.found) found, \(c.new) new, \(c.refused) refused"
            if terminal {
                // One line redrawn in place: a bar that fills per page (Apple does not say how many pages remain).
                let bar = String(repeating: "█", count: min(c.pages, 30)) + String(repeating: "·", count: max(0, 30 - c.pages))
                let text = "\r\u{1B}[2K[\(progress.done ? String(repeating: "█", count: 30) : bar)] \(line)" + (progress.done ? "\n" : "")
                // Unbuffered: a buffered print would show the line only when it ends.
                FileHandle.standardOutput.write(Data(text.utf8))
            } else {
                print(line)
            }
        }
        for outcome in outcomes {
            if let clamped = outcome.clampedFrom {
                print(
                    "\(outcome.bundleId) \(outcome.environment): asked from \(clamped.formatted(.iso8601)), Apple keeps history from \(outcome.window.lowerBound.formatted(.iso8601))"
                )
            }
            let c = outcome.counts
            print("\(outcome.bundleId) \(outcome.environment): \(c.found) in Apple's history, \(c.new) new (now queued), \(c.refused) refused")
        }
    }
}

struct BackfillCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backfill",
        abstract: "Seed subscription state from Get All Subscription Statuses for transaction ids (one a line), at Apple's rate limit.",
        discussion: """
            Ids come from --transactions FILE, or standard input. Verified like notifications; no campaign fires on backfilled \
            state unless --evaluate. Ids are asked of Production only unless --environment says otherwise. Apple is asked once \
            per id: import first (no --evaluate), then preview with --evaluate --dry-run as often as the campaigns change, then \
            --evaluate: both decide from the imported state and Apple's kept answers without asking Apple again (--refresh asks \
            again). Concurrent up to the endpoint's rate budget (Apple's 50 requests a second in Production, 5 \
            in Sandbox, shared with every Reclaim process on the database). Resumable: ids already handled \
            (reclaim.backfill_transactions) are skipped, so a run stopped by Ctrl-C, a crash or kill -9 goes on where it \
            stopped when run again. An id that is not a transaction id, or whose answer fails, is recorded with its reason and \
            the run goes on; the next run tries the failed ones again. Apple refusing the key (401, 403) stops the run.
            """
    )
    @Option(help: "A file with one transaction id a line (blank lines and lines starting with # are ignored); - or none: standard input.")
    var transactions: String?
    @Option(help: "The app (bundle id); may be omitted when one app has serverAPI.") var app: String?
    @Option(help: "Production or Sandbox: where the ids are asked (default: Production; Sandbox for an app that accepts only Sandbox).")
    var environment: String?
    @Flag(
        help:
            "Let the campaigns evaluate each subscription as the notification its status implies (e.g. expired by choice: EXPIRED/VOLUNTARY); by default backfill seeds state only and offers nothing."
    )
    var evaluate = false
    @Flag(
        name: .customLong("dry-run"),
        help:
            "Ask Apple as a real run does and write nothing (only the shared rate budget): print what would be stored and, with --evaluate, what each campaign and arm would decide (offer, hold out, skip by reason), with counts."
    )
    var dryRun = false
    @Flag(
        help:
            "Ask Apple again for ids imported before (their kept answer and state replaced); without it, an imported id is never asked again."
    )
    var refresh = false
    @Option(help: "With --evaluate: at most this many ids decided a second (their offers and offer.issued webhooks paced); default no limit.")
    var pace: Double?
    @Flag(help: "With --dry-run: print its counts as JSON rows.") var json = false
    @OptionGroup var configOptions: ConfigOptions
    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        let logger = Bootstrap.logging()
        let config = try configOptions.load()
        let data: Data
        if let transactions, transactions != "-" {
            guard let contents = FileManager.default.contents(atPath: transactions) else { throw ValidationError("cannot read \(transactions)") }
            data = contents
        } else {
            guard isatty(STDIN_FILENO) == 0 else {
                throw ValidationError("give the ids with --transactions FILE, or on standard input (reclaim backfill < ids.txt)")
            }
            data = FileHandle.standardInput.readDataToEndOfFile()
        }
        let ids = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
        let candidates = config.apps.filter { $0.serverAPI != nil }.map(\.bundleId)
        guard let bundleId = app ?? (candidates.count == 1 ? candidates[0] : nil) else {
            throw ValidationError("name the app with --app (apps with serverAPI: \(candidates.joined(separator: ", ")))")
        }
        if json && !dryRun { throw ValidationError("--json goes with --dry-run (a real run prints its progress and a summary)") }
        if let pace, !(pace > 0 && pace <= 10_000) { throw ValidationError("--pace must be from 0 to 10000 ids a second") }
        if pace != nil && !evaluate { throw ValidationError("--pace goes with --evaluate (an import alone issues no offer)") }
        let meter = BackfillProgress(terminal: isatty(STDOUT_FILENO) == 1, quiet: json)
        let counts = try await Backfill.run(
            config: config,
            url: try database.resolved(),
            app: bundleId,
            environment: environment,
            transactionIds: ids,
            evaluate: evaluate,
            dryRun: dryRun,
            refresh: refresh,
            pace: pace,
            logger: logger,
            progress: { meter.update($0) },
            report: { meter.print($0) }
        )
        guard dryRun else { return meter.finish(counts) }
        if json {
            print(try ReportJSON.render(Backfill.dryRunRows(counts, evaluate: evaluate)))
        } else {
            meter.finish(counts, dryRun: true)
            print(Backfill.dryRunSummary(counts, evaluate: evaluate))
        }
    }
}

struct AppleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apple",
        abstract: "Talk to the App Store Server API.",
        subcommands: [TestNotification.self]
    )

    struct TestNotification: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "test-notification",
            abstract: "Ask Apple to send a TEST notification and say whether, and how, it reached Reclaim (exit 1 if not)."
        )
        @Option(help: "The app (bundle id).") var app: String
        @Option(help: "Sandbox or Production; default Sandbox when the app accepts it.") var environment: String?
        @OptionGroup var configOptions: ConfigOptions
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let logger = Bootstrap.logging()
            let reached = try await RecoveryTasks.testNotification(
                config: try configOptions.load(),
                url: try database.resolved(),
                app: app,
                environment: environment,
                logger: logger
            ) { print($0) }
            if !reached { throw ExitCode(1) }
        }
    }
}
