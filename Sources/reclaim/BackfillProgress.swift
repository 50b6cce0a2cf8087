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
        let line = counts.progress(firstDone: state.withLock { $0.firstDone } ?? 0, seconds: (now - started).seconds)
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
        write(counts.summary(dryRun: dryRun, seconds: seconds) + "\n")
    }

    private func write(_ text: String) { FileHandle.standardOutput.write(Data(text.utf8)) }
}
