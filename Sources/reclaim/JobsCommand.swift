import ArgumentParser
import ReclaimService

struct JobsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "jobs", abstract: "Inspect the job queue.", subcommands: [Dead.self])

    struct Dead: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "dead",
            abstract: "List dead jobs (failed max attempts), or requeue them with --retry ID / --retry-all."
        )
        @Option(help: "Requeue this dead job.") var retry: Int64?
        @Flag(help: "Requeue every dead job.") var retryAll = false
        @OptionGroup var database: DatabaseOptions

        func validate() throws {
            if retry != nil && retryAll { throw ValidationError("use --retry ID or --retry-all, not both") }
        }

        func run() async throws {
            let logger = Bootstrap.logging()
            let url = try database.resolved()
            if retry != nil || retryAll {
                let count = try await AdminTasks.retryDeadJobs(id: retry, url: url, logger: logger)
                if let retry, count == 0 { throw ValidationError("job \(retry) is not dead (or does not exist)") }
                print("requeued \(count) job(s)")
                return
            }
            let lines = try await AdminTasks.deadJobs(url: url, logger: logger)
            if lines.isEmpty { print("no dead jobs") }
            for line in lines { print(line) }
        }
    }
}
