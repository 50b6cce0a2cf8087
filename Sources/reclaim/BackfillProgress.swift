import Foundation
import ReclaimService
import ReclaimStore
import Synchronization

/// `reclaim backfill`'s progress: on a terminal a bar redrawn in place (done/total, rate, ETA) at most five times a
/// second; otherwise a line every five seconds (`N/M ids, R/s, ETA …`), for a log; and the summary at the end.
final class BackfillProgress: Sendable {
    let terminal: Bool
    /// Nothing but the caller's own output (`--json`).
    let quiet: Bool
    let started = ContinuousClock.now
    private let state = Mutex<(last: ContinuousClock.Instant?, firstDone: Int?, drawn: Bool)>((nil, nil, false))

    init(terminal: Bool, quiet: Bool = false) {
        self.terminal = terminal
        self.quiet = quiet
    }

    func update(_ counts: Backfill.Counts) {
        guard !quiet else { return }
        let now = ContinuousClock.now
        let due = state.withLock { state -> Bool in
            if state.firstDone == nil { state.firstDone = counts.done }
            let every: Duration = terminal ? .milliseconds(200) : .seconds(5)
            let finished = counts.done == counts.total
            guard finished || state.last.map({ now - $0 >= every }) ?? !terminal else {
                if state.last == nil { state.last = now }
                return false
            }
            state.last = now
            state.drawn = terminal
            return true
        }
        guard due else { return }
        let line = Self.line(counts, firstDone: state.withLock { $0.firstDone } ?? 0, elapsed: now - started)
        if terminal {
            let share = counts.total == 0 ? 1 : Double(counts.done) / Double(counts.total)
            let filled = Int((share * 30).rounded(.down))
            let bar = String(repeating: "█", count: filled) + String(repeating: "·", count: 30 - filled)
            write("\r\u{1B}[2K[\(bar)] \(line)")
        } else {
            write("backfill: \(line)\n")
        }
    }

    /// A line of its own (an invalid id, say), without breaking the bar.
    func print(_ text: String) {
        guard !quiet else { return FileHandle.standardError.write(Data((text + "\n").utf8)) }
        let drawn = state.withLock { state -> Bool in
            defer { state.drawn = false }
            return state.drawn
        }
        write((drawn ? "\r\u{1B}[2K" : "") + text + "\n")
    }

    /// The summary; a dry run's says what would have been seeded.
    func finish(_ counts: Backfill.Counts, dryRun: Bool = false) {
        if state.withLock({ $0.drawn }) { write("\n") }
        let seconds = (ContinuousClock.now - started).seconds
        let handled = counts.done - counts.skipped
        var summary =
            "backfill\(dryRun ? " (dry run)" : ""): \(counts.total) ids: \(counts.seeded) \(dryRun ? "would be seeded" : "seeded") "
            + "(\(counts.subscriptions) subscriptions), \(counts.skipped) done before, "
            + "\(counts.notFound) not found, \(counts.invalid) invalid, \(counts.failed) failed; "
            + "\(handled) in \(Self.duration(seconds)) (\(Self.rate(Double(handled) / max(seconds, 0.001)))/s); "
            + "Apple's rate limit (429) met \(counts.rateLimited) time\(counts.rateLimited == 1 ? "" : "s")"
        summary += "\n  Apple asked for \(counts.asked) id\(counts.asked == 1 ? "" : "s")"
        if counts.fromImport > 0 {
            summary +=
                "; \(counts.fromImport) imported id\(counts.fromImport == 1 ? "" : "s") \(dryRun ? "would be decided" : "decided") from Apple's kept answers (not asked again)"
        }
        if counts.forgotten > 0 {
            summary += "\n  \(counts.forgotten) of forgotten subscribers (reclaim subscribers forget): nothing stored, not recorded"
        }
        for (reason, count) in counts.failures.sorted(by: { $0.value > $1.value }).prefix(10) {
            summary += "\n  failed \(count)× \(reason)"
        }
        if counts.failed > 0, !dryRun {
            summary += "\n  (reclaim.backfill_transactions has each id's reason; run again to retry the failed ones)"
        }
        write(summary + "\n")
    }

    static func line(_ counts: Backfill.Counts, firstDone: Int, elapsed: Duration) -> String {
        let seconds = elapsed.seconds
        let rate = Double(counts.done - firstDone) / max(seconds, 0.001)
        let remaining = counts.total - counts.done
        let eta = remaining == 0 ? "0s" : rate > 0 ? duration(Double(remaining) / rate) : "?"
        let percent = counts.total == 0 ? 100 : counts.done * 100 / counts.total
        return "\(counts.done)/\(counts.total) ids (\(percent)%), \(Self.rate(rate))/s, ETA \(eta): "
            + "\(counts.seeded) seeded, \(counts.skipped) done before, \(counts.notFound) not found, \(counts.failed + counts.invalid) failed"
    }

    static func rate(_ value: Double) -> String { String(format: "%.1f", value) }

    /// 2h05m, 3m07s, 42s.
    static func duration(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        if total >= 3600 { return "\(total / 3600)h\(String(format: "%02d", total % 3600 / 60))m" }
        if total >= 60 { return "\(total / 60)m\(String(format: "%02d", total % 60))s" }
        return "\(total)s"
    }

    private func write(_ text: String) { FileHandle.standardOutput.write(Data(text.utf8)) }
}
