import ArgumentParser
import ReclaimService
import ReclaimStore

struct PruneCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prune",
        abstract: "Delete old notifications, completed jobs and refused-input records in batches (safe beside live traffic).",
        discussion: """
            Dead jobs, unfinished jobs and notifications that a campaign decision, offer or redemption refers to are \
            never deleted. Ages are durations such as 90d, 12h or 30m; "off" leaves a table alone.
            """
    )

    @Option(help: "Delete notifications received longer ago than this that nothing refers to.") var notifications = "180d"
    @Option(help: "Delete jobs completed longer ago than this.") var jobs = "7d"
    @Option(help: "Delete records of refused inputs older than this.") var rejectedInputs = "30d"
    @Option(help: "Rows per transaction.") var batchSize = 5000
    @Flag(help: "Count what would be deleted; delete nothing.") var dryRun = false
    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        guard batchSize > 0 && batchSize <= 100_000 else { throw ValidationError("--batch-size must be from 1 to 100000") }
        _ = try policy()
    }

    func run() async throws {
        let logger = Bootstrap.logging()
        let counts = try await AdminTasks.prune(try policy(), batchSize: batchSize, dryRun: dryRun, url: try database.resolved(), logger: logger)
        let verb = dryRun ? "would delete" : "deleted"
        print("\(verb) \(counts.completedJobs) completed job(s)")
        print("\(verb) \(counts.rejectedInputs) rejected input record(s)")
        print("\(verb) \(counts.notifications) notification(s)")
    }

    private func policy() throws -> Pruning.Policy {
        Pruning.Policy(
            notifications: try Self.age(notifications, option: "--notifications"),
            completedJobs: try Self.age(jobs, option: "--jobs"),
            rejectedInputs: try Self.age(rejectedInputs, option: "--rejected-inputs")
        )
    }

    /// Seconds, or nil for "off". Ages under an hour are refused: they would prune what is still in flight.
    static func age(_ text: String, option: String) throws -> Int64? {
        if text == "off" { return nil }
        guard let duration = try? ConfigDuration(parsing: text) else {
            throw ValidationError("\(option) \(text): not a duration (e.g. 90d, 12h) or off")
        }
        guard duration.seconds >= 3600 else { throw ValidationError("\(option) \(text): must be at least 1h") }
        return duration.seconds
    }
}
