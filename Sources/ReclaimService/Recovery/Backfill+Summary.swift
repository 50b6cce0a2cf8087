import Foundation

extension Backfill.Counts {
    /// `reclaim backfill`'s closing summary (docs/adopting.md quotes it, marked `<!-- output: backfill-summary -->`;
    /// DocsContractTests renders it here and compares). `seconds`: the run's duration.
    public func summary(dryRun: Bool = false, seconds: Double) -> String {
        let handled = done - skipped
        var summary =
            "backfill\(dryRun ? " (dry run)" : ""): \(total) ids: \(seeded) \(dryRun ? "would be seeded" : "seeded") "
            + "(\(subscriptions) subscriptions), \(skipped) done before, "
            + "\(notFound) not found, \(invalid) invalid, \(failed) failed; "
            + "\(handled) in \(Self.duration(seconds)) (\(Self.rate(Double(handled) / max(seconds, 0.001)))/s); "
            + "Apple's rate limit (429) met \(rateLimited) time\(rateLimited == 1 ? "" : "s")"
        summary += "\n  Apple asked for \(asked) id\(asked == 1 ? "" : "s")"
        if fromImport > 0 {
            summary +=
                "; \(fromImport) imported id\(fromImport == 1 ? "" : "s") \(dryRun ? "would be decided" : "decided") from Apple's kept answers (not asked again)"
        }
        if forgotten > 0 {
            summary += "\n  \(forgotten) of forgotten subscribers (reclaim subscribers forget): nothing stored, not recorded"
        }
        for (reason, count) in failures.sorted(by: { $0.value > $1.value }).prefix(10) {
            summary += "\n  failed \(count)× \(reason)"
        }
        if failed > 0, !dryRun {
            summary += "\n  (reclaim.backfill_transactions has each id's reason; run again to retry the failed ones)"
        }
        return summary
    }

    /// `reclaim backfill`'s progress (after "backfill: " in a log; beside the bar on a terminal): the rate counts the
    /// ids done since the first update (`firstDone`: a resumed run's earlier ids are not this run's speed).
    /// docs/cli.md quotes it, marked `<!-- output: backfill-progress -->`.
    public func progress(firstDone: Int, seconds: Double) -> String {
        let rate = Double(done - firstDone) / max(seconds, 0.001)
        let remaining = total - done
        let eta = remaining == 0 ? "0s" : rate > 0 ? Self.duration(Double(remaining) / rate) : "?"
        let percent = total == 0 ? 100 : done * 100 / total
        return "\(done)/\(total) ids (\(percent)%), \(Self.rate(rate))/s, ETA \(eta): "
            + "\(seeded) seeded, \(skipped) done before, \(notFound) not found, \(failed + invalid) failed"
    }

    public static func rate(_ value: Double) -> String { String(format: "%.1f", value) }

    /// 2h05m, 3m07s, 42s.
    public static func duration(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        if total >= 3600 { return "\(total / 3600)h\(String(format: "%02d", total % 3600 / 60))m" }
        if total >= 60 { return "\(total / 60)m\(String(format: "%02d", total % 60))s" }
        return "\(total)s"
    }
}
