import Foundation
import Logging
import ReclaimStore

/// `reclaim subscribers show` and `forget`: one subscriber's story for support, and erasure on request
/// (docs/privacy.md).
public enum SubscriberTasks {
    public static func story(_ lookup: SubscriberLookup, url: DatabaseURL, logger: Logger) async throws -> SubscriberStory {
        try await Database.withDatabase(url, maxConnections: 1, logger: logger) { postgres in
            try await postgres.withConnection(logger: logger) { try await SubscriberStore.story(lookup, connection: $0, logger: logger) }
        }
    }

    public static func show(_ lookup: SubscriberLookup, json: Bool, url: DatabaseURL, logger: Logger) async throws -> String {
        let story = try await story(lookup, url: url, logger: logger)
        return json ? try ReportJSON.render(story) : text(story)
    }

    public static func forget(
        _ lookup: SubscriberLookup,
        dryRun: Bool = false,
        json: Bool,
        actor: String? = nil,
        url: DatabaseURL,
        logger: Logger
    ) async throws -> String {
        let outcome = try await Audit.recording(
            dryRun ? "subscriber.forget-preview" : "subscriber.forget",
            target: .subscriber(lookup.auditIdentifier),
            detail: lookup.bundleId.map { "app \($0)" },
            actor: actor,
            url: url,
            logger: logger
        ) {
            try await Database.withDatabase(url, maxConnections: 1, deadlines: .commandLine, logger: logger) { postgres in
                try await SubscriberErasure.forget(lookup, dryRun: dryRun, postgres: postgres, logger: logger)
            }
        }
        return json ? try ReportJSON.render(outcome) : forgetText(outcome, lookup: lookup)
    }

    /// `forget`'s words: what the identifier matched, the rows changed per table, and what happens next.
    static func forgetText(_ outcome: SubscriberErasure.Outcome, lookup: SubscriberLookup) -> String {
        if outcome.erasureId == nil, !outcome.dryRun, let before = outcome.forgottenBefore {
            return "nothing left to forget: forgotten on \(before); nothing recorded again"
        }
        let would = outcome.dryRun ? "would be " : ""
        var lines: [String] = []
        if outcome.dryRun { lines.append("dry run: nothing changed, nothing recorded") }
        let erasure = outcome.erasureId.map { " (erasure \($0.uuidString.lowercased()), recorded without the identifiers)" } ?? ""
        if outcome.subscriptions == 0 && outcome.rows.isEmpty {
            let recorded = outcome.dryRun ? "would be recorded" : "recorded"
            lines.append(
                outcome.forgottenBefore.map { "nothing left to forget: forgotten on \($0)" }
                    ?? "nothing stored about this subscriber; \(recorded) as forgotten: later data about it will be dropped\(erasure)"
            )
        } else {
            let plural = outcome.subscriptions == 1 ? "" : "s"
            lines.append("\(outcome.dryRun ? "would forget" : "forgotten"): \(outcome.subscriptions) subscription\(plural)\(erasure)")
        }
        if case .appAccountToken = lookup.identifier, outcome.matched.count > 1 {
            lines.append("the app account token matched \(outcome.matched.count) subscriptions: each \(would)forgotten")
        }
        for m in outcome.matched {
            lines.append("  \(m.originalTransactionId) [\(m.bundleId), \(m.environment)]")
        }
        for (table, count) in outcome.rows.sorted(by: { $0.key < $1.key }) {
            let change = ["jobs", "backfill_transactions"].contains(table) ? "deleted" : "redacted"
            lines.append("  reclaim.\(table): \(count) row\(count == 1 ? "" : "s") \(would)\(change)")
        }
        if !outcome.dryRun {
            lines.append("Apple's later notifications about this subscriber are dropped (counted, not stored): no campaign contacts them again.")
        }
        return lines.joined(separator: "\n")
    }

    /// The story as support reads it: each subscription, then what happened to it in order.
    public static func text(_ story: SubscriberStory) -> String {
        var lines: [String] = []
        if let at = story.forgottenAt { lines.append("forgotten on request on \(at) (reclaim subscribers forget)") }
        if story.subscriptions.isEmpty && story.grantsWithoutSubscription.isEmpty {
            lines.append("no subscription found")
        }
        for s in story.subscriptions {
            lines.append(
                "\(s.originalTransactionId) [\(s.bundleId), \(s.environment)]"
                    + (s.appAccountToken.map { " token \($0.uuidString.lowercased())" } ?? "")
            )
            lines.append("  " + s.stateSummary)
            lines.append("  notifications (\(s.notifications.count)):")
            for n in s.notifications {
                lines.append(
                    "    \(n.signedDate ?? n.receivedAt) \(n.type)\(n.subtype.map { "/\($0)" } ?? "")\(n.source == "apple" ? "" : " (\(n.source))")"
                )
            }
            lines.append("  campaign decisions (\(s.decisions.count)):")
            for d in s.decisions {
                lines.append(
                    "    \(d.decidedAt) \(d.campaign)\(d.variant.map { "/\($0)" } ?? ""): \(d.outcome) (\(d.reason))"
                        + (d.billingPlanType.map { ", plan \($0)" } ?? "")
                )
            }
            lines.append("  offers (\(s.offers.count)):")
            for o in s.offers {
                var line =
                    "    \(o.createdAt) \(o.campaign ?? "grant \(o.grantId?.uuidString.lowercased() ?? "?")"): \(o.offerIdentifier) for \(o.productId), \(o.state)"
                if let delivered = o.deliveredAt { line += ", delivered \(delivered) (\(o.deliveryCount)×)" }
                if let redeemed = o.redeemedAt { line += ", redeemed \(redeemed)" }
                if let ended = o.endedAt { line += ", ended \(ended)\(o.endReason.map { ": \($0)" } ?? "")" }
                if o.state == "ready" || o.state == "delivered" { line += ", deliverable until \(o.deliverableUntil)" }
                if !o.events.isEmpty { line += "; the app reported \(o.events.joined(separator: ", "))" }
                lines.append(line)
            }
            if !s.cancelSheetDecisions.isEmpty {
                lines.append("  cancel-sheet decisions (\(s.cancelSheetDecisions.count)):")
                for c in s.cancelSheetDecisions {
                    lines.append(
                        "    \(c.decidedAt) \(c.campaign): \(c.outcome) (\(c.reason))\(c.shadow ? ", shadow" : "")"
                            + (c.answer.map { ", answered \($0)" } ?? "") + (c.saveOutcome.map { ", \($0)" } ?? "")
                    )
                }
            }
            if !s.cancelFlows.isEmpty {
                lines.append("  cancel flows in the app (\(s.cancelFlows.count)):")
                for f in s.cancelFlows {
                    lines.append(
                        "    \(f.decidedAt) reason \(f.surveyReason ?? "none"): \(f.campaign.map { "\($0) " } ?? "")\(f.outcome), answered \(f.answer)"
                            + (f.variant.map { " (variant \($0))" } ?? "") + " (\(f.reason))" + (f.saveOutcome.map { ", \($0)" } ?? "")
                            + (f.steps.isEmpty ? "" : "; the app reported \(f.steps.joined(separator: ", "))")
                    )
                }
            }
            if !s.refundRequests.isEmpty {
                lines.append("  refund requests (\(s.refundRequests.count)):")
                for r in s.refundRequests {
                    lines.append(
                        "    \(r.requestedAt) \(r.arm)\(r.policy.map { " \($0)" } ?? ""): \(r.status)" + (r.outcome.map { ", Apple: \($0)" } ?? "")
                            + (r.reason.map { " (customer's reason: \($0))" } ?? "")
                            + (r.billingPlanType.map { ", plan \($0)" } ?? "") + (r.billingPeriod.map { ", \($0) period" } ?? "")
                    )
                }
            }
            if !s.redemptions.isEmpty {
                lines.append("  redemptions (\(s.redemptions.count)):")
                for x in s.redemptions {
                    lines.append(
                        "    \(x.redeemedAt) \(x.offerIdentifier ?? "-") for \(x.productId ?? "-")"
                            + (x.offerType == 3 ? " (offer code)" : "") + (x.price.map { " at \($0) \(x.currency ?? "")" } ?? "")
                    )
                }
            }
            if !s.offerCodes.isEmpty {
                lines.append("  offer codes (\(s.offerCodes.count)):")
                for c in s.offerCodes {
                    lines.append(
                        "    \(c.issuedAt) \(c.code) of \(c.offer) by \(c.campaign), expires \(c.expiresAt)"
                            + (c.redeemedAt.map { ", redeemed \($0) (inferred: Apple names the offer, not the code)" } ?? "")
                    )
                }
            }
            if !s.grants.isEmpty {
                lines.append("  grants (\(s.grants.count)):")
                for g in s.grants { lines.append("    \(g.createdAt) \(g.offerIdentifier) for \(g.productId): \(g.reason)") }
            }
            if !s.extensions.isEmpty {
                lines.append("  renewal-date extensions (\(s.extensions.count)):")
                for x in s.extensions {
                    let outcome =
                        switch x.status {
                        case "extended": "extended to \(x.effectiveDate ?? "?")"
                        case "refused": "refused: \(x.appleError ?? "?")"
                        default: "pending" + (x.appleError.map { " (last attempt: \($0))" } ?? "")
                        }
                    lines.append("    \(x.createdAt) \(x.extendByDays) days (\(x.campaign)): \(x.reason); \(outcome)")
                }
            }
            if !s.appAccountTokenUpdates.isEmpty {
                lines.append("  appAccountToken set through Apple (\(s.appAccountTokenUpdates.count)):")
                for u in s.appAccountTokenUpdates {
                    let outcome =
                        switch u.status {
                        case "set": "set \(u.settledAt ?? "")"
                        case "refused": "refused: \(u.appleError ?? "?")"
                        default: "pending"
                        }
                    let replacing = u.replaces.map { " in place of \($0)" } ?? ""
                    lines.append("    \(u.createdAt) \(u.appAccountToken)\(replacing) (known from \(u.source)); \(outcome)")
                }
            }
        }
        if !story.grantsWithoutSubscription.isEmpty {
            lines.append("grants naming no subscription found (\(story.grantsWithoutSubscription.count)):")
            for g in story.grantsWithoutSubscription { lines.append("  \(g.createdAt) \(g.offerIdentifier) for \(g.productId): \(g.reason)") }
        }
        return lines.joined(separator: "\n")
    }

    /// `reclaim subscribers set-tokens`: ``AccountTokenBacklog``.
    public static func setTokens(
        app: String,
        dryRun: Bool,
        config: ReclaimConfig,
        url: DatabaseURL,
        logger: Logger
    ) async throws
        -> AccountTokenBacklog.Counts
    {
        try await RecoveryTasks.withDependencies(config: config, url: url, logger: logger) { dependencies, _ in
            try await AccountTokenBacklog(dependencies: dependencies, logger: logger).run(bundleId: app, dryRun: dryRun)
        }
    }
}
