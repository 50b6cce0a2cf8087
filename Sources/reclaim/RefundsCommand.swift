import ArgumentParser
import ReclaimService

struct RefundsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "refunds",
        abstract: "Apple's refund requests (CONSUMPTION_REQUEST) answered by the apps' refunds policies (docs/refunds.md).",
        subcommands: [Report.self]
    )

    struct Report: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Each refund policy, the holdout and requests no policy matched: requests, answers Apple accepted, refunded, declined, the refund rate with its 95% interval and its difference from the holdout (reclaim.refund_policy_rates)."
        )
        /// Default: both environments, each row naming its own. `--json`: an array of rows (policy, requests, answered,
        /// refunded, declined, refundRate, difference, …).
        @OptionGroup var report: ReportOptions
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            print(
                try await RefundTasks.report(
                    environment: report.environment,
                    json: report.json,
                    url: try database.resolved(),
                    logger: Bootstrap.logging()
                )
            )
        }
    }
}
