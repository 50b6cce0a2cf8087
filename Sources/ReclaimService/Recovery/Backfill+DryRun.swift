import Foundation
import Logging
import PostgresNIO

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
            counts.asked == 0
                ? "dry run: nothing was stored; Apple was not asked (imported ids are decided from Apple's kept answers)"
                : "dry run: nothing was stored (Apple was asked for the \(counts.asked) ids not imported yet, as a real run would; only the shared rate budget was used)",
            "would store \(counts.subscriptions) subscription\(counts.subscriptions == 1 ? "" : "s") of \(counts.seeded) id\(counts.seeded == 1 ? "" : "s")"
                + (counts.wouldStore.isEmpty
                    ? "" : ": " + counts.wouldStore.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")),
        ]
        if counts.fromImport > 0 {
            lines.append(
                "would decide for \(counts.fromImport) imported id\(counts.fromImport == 1 ? "" : "s") from Apple's kept answers and their state now"
            )
        }
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

extension Backfill {
    /// One line of a dry run's answer: a campaign (and variant) would decide this, for this reason (its kind: the
    /// words before the details, e.g. `condition not met: lapsedWithin`).
    public struct DryRunDecision: Hashable, Sendable, Codable, Comparable {
        public var campaign: String
        public var variant: String
        /// `offered`, `held_out`, `skipped`, or `scheduled` (a delayed campaign, decided when it fires).
        public var outcome: String
        public var reason: String

        public static func < (a: Self, b: Self) -> Bool {
            (a.campaign, a.variant, a.outcome, a.reason) < (b.campaign, b.variant, b.outcome, b.reason)
        }

        /// A reason without its details (dates, counts), so that like decisions group together.
        static func kind(of reason: String) -> String {
            let parts = reason.split(whereSeparator: { $0 == ":" || $0 == ";" }).map { $0.trimmingCharacters(in: .whitespaces) }
            guard var first = parts.first else { return reason }
            if first == "condition not met", parts.count > 1 {
                return "condition not met: " + (parts[1].split(separator: " ").first.map(String.init) ?? parts[1])
            }
            // The arm is the row's variant already.
            if let arm = first.range(of: " (variant ") { first = String(first[..<arm.lowerBound]) }
            return first
        }
    }

    /// Apple's subscription status, named (Get All Subscription Statuses' `status`).
    static func statusName(_ status: Int64?) -> String {
        switch status {
        case 1: "active"
        case 2: "expired"
        case 3: "billing retry"
        case 4: "grace period"
        case 5: "revoked"
        default: "unknown"
        }
    }

    /// Ends a dry run's transaction (rolled back, so nothing is written), carrying what it decided.
    struct DryRunRolledBack: Error {
        let decisions: [DryRunDecision]
        /// The subscriptions the transaction took, those forgotten meanwhile left out.
        var subscriptions: Int
    }
}

extension Backfill.Item {
    /// The decisions the campaigns made in this transaction for these implied notifications, and the delayed
    /// campaigns they scheduled.
    static func decisions(of uuids: [UUID], connection: PostgresConnection, logger: Logger) async throws -> [Backfill.DryRunDecision] {
        var decisions: [Backfill.DryRunDecision] = []
        let rows = try await connection.query(
            """
            SELECT campaign_id, coalesce(variant_id, ''), outcome, reason FROM reclaim.campaign_decisions
            WHERE notification_uuid = ANY(\(uuids))
            UNION ALL
            SELECT payload->>'campaignId', '', 'scheduled', 'decided when it fires' FROM reclaim.jobs
            WHERE kind = \(CampaignFire.jobKind) AND upper(payload->>'notificationUUID') = ANY(\(uuids.map(\.uuidString)))
            """,
            logger: logger
        )
        for try await (campaign, variant, outcome, reason) in rows.decode((String, String, String, String).self) {
            decisions.append(
                Backfill.DryRunDecision(campaign: campaign, variant: variant, outcome: outcome, reason: Backfill.DryRunDecision.kind(of: reason))
            )
        }
        return decisions
    }
}
