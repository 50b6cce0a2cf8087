import Foundation
import Synchronization
import Testing

/// Finds whatever blocks Swift's cooperative pool during the tests.
///
/// The pool has as many threads as cores: two on the machines this suite runs on. A blocking call on it (a
/// `waitpid`, a `usleep`, a semaphore, CPU-bound work that never yields) holds a thread; two of them stop every task
/// of the test process, and every timer of every other test fires late. CI once saw a 200 ms timer fire after 40 s.
///
/// A task ticks every 50 ms; a tick over ``threshold`` late is a stall. Each stall is written to standard error the
/// moment it is seen, unbuffered, with the tests then running (every suite's ``PoolWatchdogTrait`` tells it which
/// run): the culprit is one of them. The stall fails the run once, not the tests beside it: when the test
/// process exits, it exits 1 if any stall was seen that no test excused (``excusing(_:)``), naming them again. The
/// tests that ran beside a stall are left passing: their own checks tell whether they are right, and a late timer
/// in one of them is the stall's fault, already reported.
public final class PoolWatchdog: Sendable {
    public static let shared = PoolWatchdog(failsTheRun: true)
    /// A tick this late means no pool thread was free for that long; a busy but unblocked pool runs it in
    /// milliseconds.
    public static let threshold = Duration.seconds(1)
    public static let tick = Duration.milliseconds(50)
    /// No integration test takes this long (the longest, about 90 s); one that has is waiting for what never comes,
    /// and the watchdog says which on standard error, unbuffered, every minute (scripts/test runs the test binary
    /// directly: `swift test` would hold these lines back with the rest of the output until its end).
    public static let longRun = Duration.seconds(240)

    public struct Stall: Sendable, CustomStringConvertible {
        public let from: ContinuousClock.Instant
        public let to: ContinuousClock.Instant
        public let running: [String]
        public let excused: Bool

        public var late: Duration { to - from - PoolWatchdog.tick }
        public var description: String {
            "a \(PoolWatchdog.milliseconds(PoolWatchdog.tick)) tick of the pool watchdog came \(PoolWatchdog.milliseconds(late)) late "
                + "(tests running: \(running.sorted().joined(separator: "; ")))"
        }
    }

    private let failsTheRun: Bool

    /// - Parameter failsTheRun: the process exits 1 at its end when this watchdog saw a stall no test excused. Only
    ///   the shared one does; the watchdog's own test makes one that does not.
    public init(failsTheRun: Bool = false) {
        self.failsTheRun = failsTheRun
    }

    private struct State {
        var started = false
        var running: [String: Int] = [:]
        /// When each running test began, and when it was last reported as running long.
        var since: [String: (began: ContinuousClock.Instant, reported: ContinuousClock.Instant?)] = [:]
        /// The last tests to begin or end, and when: with none running and none for long, the hang is outside any test.
        var events: [(what: String, at: ContinuousClock.Instant)] = []
        var quietReported: ContinuousClock.Instant?
        var stalls: [Stall] = []
        /// Windows in which a stall is deliberate (``excusing(_:)``): reported to no test.
        var excused: [(from: ContinuousClock.Instant, to: ContinuousClock.Instant?)] = []
        var lastTick: ContinuousClock.Instant?
        /// The five tests that ran longest, from the moment each began running (Swift Testing's own "started" comes
        /// before a test waits for its turn under a parallelization width, so its durations include that wait).
        var slowest: [(String, Duration)] = []
        /// The latest tick of the run, below the threshold or not: the margin a passing run had.
        var latest: (late: Duration, at: ContinuousClock.Instant, running: [String]) = (.zero, .now, [])

        /// Whether a tick late from `from` to `to` falls in a deliberate stall's window, which is open while it runs
        /// and a little after (``excusing(_:)``).
        func isExcused(from: ContinuousClock.Instant, to: ContinuousClock.Instant) -> Bool {
            excused.contains { window in to >= window.from && from <= (window.to ?? to) }
        }
    }

    private let state = Mutex(State())

    /// Starts the ticking task once, at `priority`: the tests' own. Each priority has a pool of threads of its own
    /// (libdispatch's root queue per quality of service), and a watchdog at another would tick on while theirs stalls.
    public func start(priority: TaskPriority = Task.currentPriority) {
        let first = state.withLock { state -> Bool in
            defer { state.started = true }
            return !state.started
        }
        guard first else { return }
        if failsTheRun { atexit { PoolWatchdog.shared.failTheRunIfStalled() } }
        Task.detached(priority: priority) { [self] in
            var last = ContinuousClock.now
            while true {
                try? await Task.sleep(for: Self.tick)
                let now = ContinuousClock.now
                let late = now - last - Self.tick
                if late > Self.threshold { record(from: last, to: now) }
                state.withLock { state in
                    state.lastTick = now
                    if late > state.latest.late, !state.isExcused(from: last, to: now) {
                        state.latest = (late, now, Array(state.running.keys))
                    }
                }
                last = now
                reportLongRuns(now: now)
            }
        }
        startSentinel(priority: priority)
    }

    /// A thread outside the pool and outside libdispatch that checks, every 10 s, that the ticking task still ticks.
    /// When it has not for ``longRun``, the sentinel tells which is dead, on standard error: it starts a task with
    /// no timer and one that sleeps 10 ms; if the first runs and the second never wakes, the pool runs and its timers
    /// do not (a dispatch timer that never fires); if neither runs, the pool itself is held.
    private func startSentinel(priority: TaskPriority) {
        let thread = Thread { [self] in
            var reported: ContinuousClock.Instant?
            while true {
                Thread.sleep(forTimeInterval: 10)
                let now = ContinuousClock.now
                let lastTick = state.withLock { $0.lastTick } ?? now
                guard now - lastTick > Self.longRun, reported.map({ now - $0 > .seconds(60) }) ?? true else { continue }
                reported = now
                let ran = Atomic(false)
                let slept = Atomic(false)
                Task.detached(priority: priority) { ran.store(true, ordering: .releasing) }
                Task.detached(priority: priority) {
                    try? await Task.sleep(for: .milliseconds(10))
                    slept.store(true, ordering: .releasing)
                }
                Thread.sleep(forTimeInterval: 2)
                let verdict =
                    switch (ran.load(ordering: .acquiring), slept.load(ordering: .acquiring)) {
                    case (true, false): "a new task runs at once but a 10 ms Task.sleep has not woken in 2 s: the pool's timers are dead"
                    case (true, true): "a new task and a 10 ms Task.sleep both ran: the ticking task itself is held"
                    default: "a new task has not run in 2 s: every pool thread is held"
                    }
                Self.say(
                    "pool watchdog: sentinel: no tick for \((now - lastTick).components.seconds) s; \(verdict) (tests running: \(self.state.withLock { $0.running.keys.sorted() }.joined(separator: "; ")))"
                )
            }
        }
        thread.name = "pool watchdog sentinel"
        thread.start()
    }

    /// Records a stall and says so at once, on standard error, unbuffered (the runner's own output sits in a pipe).
    private func record(from: ContinuousClock.Instant, to: ContinuousClock.Instant) {
        let stall = state.withLock { state in
            let stall = Stall(from: from, to: to, running: Array(state.running.keys), excused: state.isExcused(from: from, to: to))
            state.stalls.append(stall)
            return stall
        }
        guard failsTheRun else { return }
        Self.say("pool watchdog: STALL: \(stall) [\(stall.excused ? "excused: deliberate" : "this run fails at its end for it")]")
    }

    /// The stalls that no test excused: each fails the run (the shared watchdog's, at exit).
    public var failures: [Stall] { state.withLock { $0.stalls.filter { !$0.excused } } }

    /// Run at exit (`atexit`): a run that stalled exits 1, once, naming each stall and the tests then running.
    private func failTheRunIfStalled() {
        let (failures, latest, slowest) = state.withLock { state in (state.stalls.filter { !$0.excused }, state.latest, state.slowest) }
        Self.say(
            "pool watchdog: the slowest tests, from when each began running: "
                + slowest.map { "\(Self.milliseconds($0.1)) \($0.0)" }.joined(separator: "; ")
        )
        guard !failures.isEmpty else {
            Self.say(
                "pool watchdog: no stall; the latest \(Self.milliseconds(Self.tick)) tick came \(Self.milliseconds(latest.late)) late "
                    + "(tests running: \(latest.running.sorted().joined(separator: "; ")))"
            )
            return
        }
        Self.say(
            "pool watchdog: the cooperative pool stalled \(failures.count) time(s) during this run, so it fails; something blocked "
                + "both pool threads (a blocking wait such as waitpid, usleep or a semaphore, or work that never yields: await it, or run "
                + "it on a thread of its own), and it is one of the tests running then:\n"
                + failures.map { "  \($0)" }.joined(separator: "\n")
        )
        fflush(nil)
        _exit(1)
    }

    static func milliseconds(_ duration: Duration) -> String { "\(Int(duration / .milliseconds(1))) ms" }

    private static func say(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    func began(_ test: String) {
        state.withLock { state in
            state.running[test, default: 0] += 1
            if state.since[test] == nil { state.since[test] = (.now, nil) }
            state.events = Array((state.events + [("began \(test)", .now)]).suffix(5))
        }
    }

    func ended(_ test: String) {
        state.withLock { state in
            state.running[test, default: 1] -= 1
            if state.running[test] == 0 {
                state.running[test] = nil
                if let began = state.since.removeValue(forKey: test)?.began {
                    state.slowest = Array((state.slowest + [(test, .now - began)]).sorted { $0.1 > $1.1 }.prefix(5))
                }
            }
            state.events = Array((state.events + [("ended \(test)", .now)]).suffix(5))
        }
    }

    /// Writes a line to standard error for each test running longer than ``longRun``, once a minute.
    private func reportLongRuns(now: ContinuousClock.Instant) {
        let long = state.withLock { state -> [(String, Duration)] in
            var long: [(String, Duration)] = []
            for (test, times) in state.since where now - times.began > Self.longRun {
                if let reported = times.reported, now - reported < .seconds(60) { continue }
                state.since[test]?.reported = now
                long.append((test, now - times.began))
            }
            return long
        }
        for (test, duration) in long {
            Self.say("pool watchdog: test \(test) has run for \(duration.components.seconds) s: hung?")
        }
        // No test running, and none began or ended for as long: the process waits outside every test (a suite's set-up
        // or tear-down, a test without the trait, the runner). Say what happened last.
        let quiet = state.withLock { state -> [String]? in
            guard state.running.isEmpty, let last = state.events.last, now - last.at > Self.longRun,
                state.quietReported.map({ now - $0 >= .seconds(60) }) ?? true
            else { return nil }
            state.quietReported = now
            return state.events.map { "\($0.what) \((now - $0.at).components.seconds) s ago" }
        }
        if let quiet {
            Self.say("pool watchdog: no test has begun or ended for \(Self.longRun); the last: \(quiet.joined(separator: "; "))")
        }
    }

    /// Every stall recorded within `from...to`, excused or not (for the watchdog's own test).
    public func recorded(from: ContinuousClock.Instant, to: ContinuousClock.Instant) -> [Stall] {
        state.withLock { $0.stalls.filter { $0.to >= from && $0.from <= to } }
    }

    /// Runs `body`, whose stalls are deliberate: they do not fail the run.
    public func excusing<T>(_ body: () async throws -> T) async rethrows -> T {
        let index = state.withLock { state in
            state.excused.append((ContinuousClock.now, nil))
            return state.excused.count - 1
        }
        defer {
            // The tick that ends a stall comes after it: the window stays open a threshold longer.
            let end = ContinuousClock.now + Self.threshold + Self.tick
            state.withLock { $0.excused[index].to = end }
        }
        return try await body()
    }
}

/// `.poolWatchdog` on a suite: the watchdog runs while its tests do, and names them beside any stall
/// (``PoolWatchdog``).
public struct PoolWatchdogTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        guard testCase != nil else { return try await function() }
        let watchdog = PoolWatchdog.shared
        watchdog.start()
        let name = "\(test.id)"
        watchdog.began(name)
        defer { watchdog.ended(name) }
        try await function()
    }
}

extension Trait where Self == PoolWatchdogTrait {
    /// Names this suite's tests beside any stall of the cooperative pool, which fails the run (``PoolWatchdog``).
    public static var poolWatchdog: Self { PoolWatchdogTrait() }
}
