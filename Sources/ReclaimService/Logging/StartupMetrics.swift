import Metrics
import ReclaimDomain
import ReclaimStore

/// This build's version; `reclaim --version` prints it and `reclaim_build_info` carries it.
public enum ReclaimVersion {
    /// CHANGELOG.md, the one source of the version, says it (``version(changelog:)``). The file is compiled in
    /// (`Logging/CHANGELOG.md` links to the repository's).
    public static let current = version(changelog: String(decoding: PackageResources.CHANGELOG_md, as: UTF8.self))

    /// The newest release, with `+unreleased` when the `## [Unreleased]` section lists any change: a build from
    /// between releases says it holds more than the release it names (SemVer build metadata, so it still orders
    /// as that release). "0.0.0" when the changelog names no release. `scripts/lib/version` computes the same for the
    /// image's label.
    public static func version(changelog: String) -> String {
        let release = newestRelease(in: changelog) ?? "0.0.0"
        return hasUnreleasedChanges(changelog) ? release + "+unreleased" : release
    }

    /// The version of a changelog's first release heading, `## [1.2.3] - 2026-11-26` -> "1.2.3".
    public static func newestRelease(in changelog: String) -> String? {
        for line in changelog.split(separator: "\n") where line.hasPrefix("## [") {
            let heading = line.dropFirst(4)
            if let end = heading.firstIndex(of: "]"), heading.first?.isNumber == true { return String(heading[..<end]) }
        }
        return nil
    }

    /// Whether the `## [Unreleased]` section (up to the next `## ` heading) has an entry, a line starting `- `.
    static func hasUnreleasedChanges(_ changelog: String) -> Bool {
        var inside = false
        for line in changelog.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("## [Unreleased]") {
                inside = true
            } else if line.hasPrefix("## ") {
                if inside { return false }
            } else if inside, line.hasPrefix("- ") {
                return true
            }
        }
        return false
    }
}

/// Metrics that must exist from start-up: a counter created on first use is absent until then, so a dashboard
/// panel says "no data" and a `rate()` in an alert has nothing to compare. Every counter the dashboards and alerts
/// read is created at zero here, for every configured campaign, with `reclaim_build_info`.
enum StartupMetrics {
    static func register(config: ReclaimConfig) {
        Gauge(
            label: "reclaim_build_info",
            dimensions: [("version", ReclaimVersion.current), ("schema_version", String(Migrator.targetVersion))]
        ).record(1)
        for campaign in config.campaigns.map(\.id) {
            for outcome in CampaignDecision.Outcome.allCases {
                Counter(label: "reclaim_campaign_decisions_total", dimensions: [("campaign", campaign), ("outcome", outcome.rawValue)])
                    .increment(by: 0)
            }
            for label in ["reclaim_offers_issued_total", "reclaim_offers_delivered_total", "reclaim_offers_redeemed_total"] {
                Counter(label: label, dimensions: [("campaign", campaign)]).increment(by: 0)
            }
        }
        Counter(label: "reclaim_offers_redeemed_total", dimensions: [("campaign", "not_issued_by_reclaim")]).increment(by: 0)
        Counter(label: "reclaim_offers_withdrawn_total").increment(by: 0)
        Counter(label: "reclaim_offers_expired_total").increment(by: 0)
        for event in OfferRequestInput.events.sorted() {
            Counter(label: "reclaim_offer_events_total", dimensions: [("event", event)]).increment(by: 0)
        }
        for purpose in ["issue", "grant", "delivery", "refresh", "retention_messaging"] {
            Counter(label: "reclaim_offer_signatures_total", dimensions: [("purpose", purpose)]).increment(by: 0)
        }
        for operation in ["acquire", "query", "transaction"] {
            Counter(label: "reclaim_database_timeouts_total", dimensions: [("operation", operation)]).increment(by: 0)
            Counter(label: "reclaim_database_connections_lost_total", dimensions: [("operation", operation)]).increment(by: 0)
        }
        for outcome in ["stored", "duplicate"] {
            Counter(label: "reclaim_notifications_total", dimensions: [("outcome", outcome)]).increment(by: 0)
        }
        for label in ["reclaim_jobs_completed_total", "reclaim_jobs_failed_total", "reclaim_jobs_dead_total"] {
            Counter(label: label).increment(by: 0)
        }
        // Refund answers, for an app with `refunds`: retries that wait on Apple (ReclaimRefundAnswersUnauthorized reads
        // the unauthorized ones) and the settled answers.
        if config.apps.contains(where: { $0.refunds != nil }) {
            for reason in ["unauthorized", "unavailable"] {
                Counter(label: "reclaim_refund_answer_retries_total", dimensions: [("reason", reason)]).increment(by: 0)
            }
            for status in ["sent", "refused", "expired", "unanswered"] {
                Counter(label: "reclaim_refund_answers_total", dimensions: [("status", status)]).increment(by: 0)
            }
        }
        // Extension grants (make-goods through Apple), for an app that can call Apple.
        if config.apps.contains(where: { $0.serverAPI != nil }) {
            for status in ["extended", "refused"] {
                Counter(label: "reclaim_renewal_extensions_total", dimensions: [("status", status)]).increment(by: 0)
            }
            Counter(label: "reclaim_mass_extension_notifications_total").increment(by: 0)
        }
        // Set App Account Token, for an app that opted in.
        if config.apps.contains(where: { $0.setAppAccountToken != .off }) {
            for status in ["set", "refused"] {
                Counter(label: "reclaim_app_account_tokens_total", dimensions: [("status", status)]).increment(by: 0)
            }
        }
        // Reconciliation, for each app it runs for (those with serverAPI) and each environment it accepts.
        for app in config.apps where app.serverAPI != nil {
            for environment in app.environments where ["Production", "Sandbox"].contains(environment) {
                let dimensions = [("app", app.bundleId), ("environment", environment)]
                Counter(label: "reclaim_reconciliation_missed_total", dimensions: dimensions).increment(by: 0)
                for outcome in ["completed", "failed"] {
                    Counter(label: "reclaim_reconciliation_runs_total", dimensions: dimensions + [("outcome", outcome)]).increment(by: 0)
                }
            }
        }
    }
}
