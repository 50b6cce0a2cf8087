import Foundation

/// What `reclaim backfill --dry-run` prints: what a real run would store and what the campaigns would decide, counted
/// per campaign and arm, with nothing written but the shared rate budget.
extension Backfill {
    /// One row of `--dry-run --json`: a campaign's decision of a kind, with how many (`--evaluate`); or, without
    /// `--evaluate`, the subscriptions of one status that would be stored.
    public struct DryRunRow: Encodable, Equatable, Sendable {
        public var campaign: String?
        public var variant: String?
        public var outcome: String?
        public var reason: String?
        public var status: String?
        public var count: Int
    }

    public static func dryRunRows(_ counts: Counts, evaluate: Bool) -> [DryRunRow] {
        if evaluate {
            return counts.wouldDecide.sorted { $0.key < $1.key }.map {
                DryRunRow(campaign: $0.key.campaign, variant: $0.key.variant, outcome: $0.key.outcome, reason: $0.key.reason, count: $0.value)
            }
        }
        return counts.wouldStore.sorted { $0.key < $1.key }.map { DryRunRow(status: $0.key, count: $0.value) }
    }

    /// The dry run's report for a person: per campaign, each arm's offers, holdouts and skips by reason.
    public static func dryRunSummary(_ counts: Counts, evaluate: Bool) -> String {
        var lines = [
            "dry run: nothing was stored (Apple was asked as a real run would; only the shared rate budget was used)",
            "would store \(counts.subscriptions) subscription\(counts.subscriptions == 1 ? "" : "s") of \(counts.seeded) id\(counts.seeded == 1 ? "" : "s")"
                + (counts.wouldStore.isEmpty
                    ? "" : ": " + counts.wouldStore.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")),
        ]
        guard evaluate else {
            lines.append("no campaign evaluates without --evaluate")
            return lines.joined(separator: "\n")
        }
        let byCampaign = Dictionary(grouping: counts.wouldDecide, by: \.key.campaign)
        if byCampaign.isEmpty { lines.append("no campaign would be triggered") }
        for campaign in byCampaign.keys.sorted() {
            lines.append("campaign \(campaign):")
            for (decision, count) in (byCampaign[campaign] ?? []).sorted(by: { $0.key < $1.key }) {
                let arm = decision.variant.isEmpty ? "" : " (variant \(decision.variant))"
                switch decision.outcome {
                case "offered": lines.append("  offer\(arm): \(count)")
                case "held_out": lines.append("  hold out\(arm): \(count)")
                case "scheduled": lines.append("  scheduled, decided when it fires: \(count)")
                default: lines.append("  skip\(arm), \(decision.reason): \(count)")
                }
            }
        }
        return lines.joined(separator: "\n")
    }
}
