import Foundation
import Logging
import ReclaimStore

/// `reclaim refunds report`: each refund policy (and the holdout, and requests no policy matched) with Apple's
/// decisions, from `reclaim.refund_policy_rates`.
public enum RefundTasks {
    /// One row of `--json`: the view's columns, camel-cased; `policy` is the policy id, `(holdout)` or `(no policy)`.
    public typealias Row = RefundRequestStore.Rate

    public static func rates(environment: String?, url: DatabaseURL, logger: Logger) async throws -> [Row] {
        try await Database.withDatabase(url, maxConnections: 1, logger: logger) { client in
            try await client.withConnection(logger: logger) {
                try await RefundRequestStore.rates(environment: environment, connection: $0, logger: logger)
            }
        }
    }

    public static func report(environment: String?, json: Bool, url: DatabaseURL, logger: Logger) async throws -> String {
        let rows = try await rates(environment: environment, url: url, logger: logger)
        if json {
            return try ReportJSON.render(rows)
        }
        guard !rows.isEmpty else { return "no refund request recorded" + (environment.map { " in \($0)" } ?? "") }
        var lines = [
            "Refund requests; the refund rate is refunded / (refunded + declined), 95% intervals (Wilson; Newcombe for the difference),",
            "each policy against its own held-out counterparts (the held-out requests its conditions matched):",
        ]
        for row in rows {
            lines.append("\(row.policy) [\(row.bundleId), \(row.environment)]")
            var counts = "  requests \(row.requests), answered \(row.answered), refunded \(row.refunded), declined \(row.declined)"
            if row.unanswered > 0 { counts += ", not answered \(row.unanswered) (a fact Reclaim does not know)" }
            lines.append(counts)
            lines.append("  refund rate        \(IntervalText.percent(row.refundRate, lower: row.refundRateLower, upper: row.refundRateUpper))")
            if row.policy != "(holdout)" {
                lines.append(
                    "  against holdout    \(IntervalText.percent(row.difference, lower: row.differenceLower, upper: row.differenceUpper, signed: true))"
                        + " (its counterparts: refunded \(row.holdoutRefunded), declined \(row.holdoutDeclined))"
                )
            }
        }
        return lines.joined(separator: "\n")
    }
}
