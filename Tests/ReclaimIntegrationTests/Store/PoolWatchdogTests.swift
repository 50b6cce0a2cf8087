import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The guard against blocking calls on the cooperative pool, shown catching one. (Run in the load pass, alone: the
/// deliberate stall would hold up any test beside it, though none is failed for it.)
@Suite("The pool watchdog finds a blocking call", .poolWatchdog)
struct PoolWatchdogTests {
    @Test("a usleep of 1.5 s on every pool thread is recorded as a stall of over a second")
    func catchesBlockingCall() async throws {
        let watchdog = PoolWatchdog.shared
        watchdog.start()
        // Two ticks first, so the watchdog's task runs.
        try await Task.sleep(for: PoolWatchdog.tick * 3)
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
        // Excused, it fails no test: the trait reports nothing for it.
        #expect(watchdog.stalls(from: began, to: .now).isEmpty)
    }
}
