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
        @Option(help: "Production or Sandbox; default both, each row naming its own.") var environment: String?
        @Flag(help: "JSON: an array of rows (policy, requests, answered, refunded, declined, refundRate, difference, …).") var json = false
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            if let environment, !["Production", "Sandbox"].contains(environment) {
                throw ValidationError("--environment must be Production or Sandbox")
            }
            print(try await RefundTasks.report(environment: environment, json: json, url: try database.resolved(), logger: Bootstrap.logging()))
        }
    }
}
