import Foundation
import Synchronization
import Testing

/// Finds whatever blocks Swift's cooperative pool during the tests.
///
/// The pool has as many threads as cores: two on the machines this suite runs on. A blocking call on it (a
/// `waitpid`, a `usleep`, a semaphore, CPU-bound work that never yields) holds a thread; two of them stop every task
/// of the test process, and every timer of every other test fires late. CI once saw a 200 ms timer fire after 40 s.
///
/// A task ticks every 50 ms and records any tick that came over ``threshold`` late (a stall) with the tests running
/// at that moment. Every integration suite carries the ``PoolWatchdogTrait`` (`.poolWatchdog`): a test during which a
/// stall began or ended fails, naming the stall and the other tests that ran beside it. The culprit is one of them.
final class PoolWatchdog: Sendable {
    static let shared = PoolWatchdog()
    /// A tick this late means no pool thread was free for that long; a busy but unblocked pool runs it in
    /// milliseconds.
    static let threshold = Duration.seconds(1)
    static let tick = Duration.milliseconds(50)
    /// No integration test takes this long (the longest, about 90 s); one that has is waiting for what never comes,
    /// and the watchdog says which on standard error, unbuffered, every minute: the test runner's own output is
    /// buffered in a pipe and would stop mid-line far before the hung test (as two CI runs showed).
    static let longRun = Duration.seconds(240)

    struct Stall: Sendable, CustomStringConvertible {
        let from: ContinuousClock.Instant
        let to: ContinuousClock.Instant
        let running: [String]

        var late: Duration { to - from - PoolWatchdog.tick }
        var description: String {
            "a \(PoolWatchdog.tick) tick of the pool watchdog came \(late) late (tests running: \(running.sorted().joined(separator: "; ")))"
        }
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
    }

    private let state = Mutex(State())

    /// Starts the ticking task once, at `priority`: the tests' own. Each priority has a pool of threads of its own
    /// (libdispatch's root queue per quality of service), and a watchdog at another would tick on while theirs stalls.
    func start(priority: TaskPriority = Task.currentPriority) {
        let first = state.withLock { state -> Bool in
            defer { state.started = true }
            return !state.started
        }
        guard first else { return }
        Task.detached(priority: priority) { [self] in
            var last = ContinuousClock.now
            while true {
                try? await Task.sleep(for: Self.tick)
                let now = ContinuousClock.now
                if now - last - Self.tick > Self.threshold {
                    state.withLock { state in
                        state.stalls.append(Stall(from: last, to: now, running: Array(state.running.keys)))
                    }
                }
                last = now
                reportLongRuns(now: now)
            }
        }
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
                state.since[test] = nil
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
            FileHandle.standardError.write(Data("pool watchdog: test \(test) has run for \(duration.components.seconds) s: hung?\n".utf8))
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
            FileHandle.standardError.write(
                Data("pool watchdog: no test has begun or ended for \(Self.longRun); the last: \(quiet.joined(separator: "; "))\n".utf8)
            )
        }
    }

    /// The stalls that began or ended within `from...to`, outside every excused window.
    func stalls(from: ContinuousClock.Instant, to: ContinuousClock.Instant) -> [Stall] {
        state.withLock { state in
            state.stalls.filter { stall in
                let overlaps = stall.to >= from && stall.from <= to
                let excused = state.excused.contains { window in stall.to >= window.from && stall.from <= (window.to ?? .now) }
                return overlaps && !excused
            }
        }
    }

    /// Every stall recorded within `from...to`, excused or not (for the watchdog's own test).
    func recorded(from: ContinuousClock.Instant, to: ContinuousClock.Instant) -> [Stall] {
        state.withLock { $0.stalls.filter { $0.to >= from && $0.from <= to } }
    }

    /// Runs `body`, whose stalls are deliberate: no test is failed for them.
    func excusing<T>(_ body: () async throws -> T) async rethrows -> T {
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

/// `.poolWatchdog` on a suite: each of its tests fails when the cooperative pool stalled while it ran
/// (``PoolWatchdog``).
struct PoolWatchdogTrait: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        guard testCase != nil else { return try await function() }
        let watchdog = PoolWatchdog.shared
        watchdog.start()
        let name = "\(test.id)"
        let began = ContinuousClock.now
        watchdog.began(name)
        defer { watchdog.ended(name) }
        try await function()
        // A stall that ends after the test did still began during it: its tick is seen up to a threshold later.
        try? await Task.sleep(for: PoolWatchdog.tick * 2)
        for stall in watchdog.stalls(from: began, to: .now) {
            Issue.record(
                "the cooperative pool stalled while this test ran: \(stall). Something blocked both pool threads: a blocking wait (waitpid, usleep, a semaphore) or work that never yields; await it instead, or run it on a thread of its own."
            )
        }
    }
}

extension Trait where Self == PoolWatchdogTrait {
    /// Fails a test during which the cooperative pool stalled (``PoolWatchdog``).
    static var poolWatchdog: Self { PoolWatchdogTrait() }
}
