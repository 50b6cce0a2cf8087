import Foundation
import ReclaimTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The guard against blocking calls on the cooperative pool, shown catching one. (Run in the load pass, alone: the
/// deliberate stall would hold up any test beside it, though it fails nothing.)
@Suite("The pool watchdog finds a blocking call", .poolWatchdog)
struct PoolWatchdogTests {
    @Test("a usleep of 1.5 s on every pool thread is recorded as a stall of over a second, which fails the run unless excused")
    func catchesBlockingCall() async throws {
        let watchdog = PoolWatchdog.shared
        // A second watchdog that excuses nothing and fails no run: it shows what the stall would do to the run.
        let unexcused = PoolWatchdog()
        try await ticking(watchdog, unexcused)
        let began = ContinuousClock.now
        await watchdog.excusing {
            // One blocking call per pool thread (as many as cores): nothing else of the process runs meanwhile.
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<ProcessInfo.processInfo.activeProcessorCount {
                    group.addTask { usleep(1_500_000) }
                }
            }
            // The watchdog's late tick comes once a thread is free again.
            try? await Task.sleep(for: PoolWatchdog.tick * 4)
        }
        let stalls = watchdog.recorded(from: began, to: .now)
        #expect(stalls.contains { $0.late > .seconds(1) }, "no stall recorded: \(stalls)")
        #expect(stalls.first?.running.contains { $0.contains("catchesBlockingCall") } == true, "the stall names this test: \(stalls)")
        // Excused, it does not fail the run; not excused, it would.
        #expect(stalls.allSatisfy { $0.excused }, "\(stalls)")
        #expect(watchdog.failures.filter { $0.to >= began }.isEmpty)
        #expect(unexcused.failures.contains { $0.to >= began && $0.late > .seconds(1) }, "\(unexcused.failures)")
    }
}

/// What `.onTestThreads` is for: long synchronous work there leaves the pool free.
@Suite("Long synchronous work on the tests' own threads holds no pool thread", .poolWatchdog)
struct TestThreadsTests {
    @Test("1.5 s of computation on every pool thread's worth of test threads: no tick of the watchdog comes a second late")
    func computationOffThePool() async throws {
        let watchdog = PoolWatchdog.shared
        try await ticking(watchdog)
        let began = ContinuousClock.now
        let ran = await onTestThreads {
            await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<ProcessInfo.processInfo.activeProcessorCount {
                    group.addTask {
                        // Work that never suspends, as a regular expression over a long page does.
                        let end = ContinuousClock.now + .milliseconds(1500)
                        var spins = 0
                        while ContinuousClock.now < end { spins &+= 1 }
                        return spins > 0 && TestThreads.shared.isCurrent()
                    }
                }
                return await group.reduce(into: [Bool]()) { $0.append($1) }
            }
        }
        try await Task.sleep(for: PoolWatchdog.tick * 4)
        #expect(ran == Array(repeating: true, count: ProcessInfo.processInfo.activeProcessorCount), "on the test threads: \(ran)")
        // (Excused stalls are the watchdog's own test's, should it run beside this one.)
        let stalls = watchdog.recorded(from: began, to: .now).filter { !$0.excused }
        #expect(stalls.isEmpty, "\(stalls)")
    }
}

/// Starts `watchdogs` and lets them tick a few times, so that their tasks run before a test stalls the pool.
func ticking(_ watchdogs: PoolWatchdog...) async throws {
    for watchdog in watchdogs { watchdog.start() }
    try await Task.sleep(for: PoolWatchdog.tick * 3)
}
