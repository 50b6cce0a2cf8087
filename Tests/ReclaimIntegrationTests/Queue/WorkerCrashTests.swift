import Foundation
import PostgresNIO
import ReclaimStore
import ReclaimTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Worker processes killed with kill -9", .poolWatchdog)
struct WorkerCrashTests {
    @Test("kill -9 worker processes at random moments, 12 rounds: every job completes exactly once, none stuck")
    func killNine() async throws {
        let binary = try Binaries.path("reclaim-bench")
        try await withTestDatabase { client, url in
            try await createEffectsTable(client)
            let total = 6000
            try await enqueue(total, client: client)
            var generator = SystemRandomNumberGenerator()
            var killsWhileDraining = 0
            func spawn() throws -> Subprocess {
                try Subprocess(
                    binary,
                    [
                        "queue-worker", "--database-url", url.connectionString, "--concurrency", "2", "--batch", "10", "--delay-ms", "3",
                        "--lease-seconds", "2",
                    ]
                )
            }
            for _ in 0..<12 {
                let workers = try (0..<3).map { _ in try spawn() }
                // Each worker dies at its own random moment: mid-claim, mid-batch, mid-commit.
                for worker in workers.shuffled(using: &generator) {
                    try await Task.sleep(for: .milliseconds(Int.random(in: 50...350, using: &generator)))
                    worker.signal(SIGKILL)
                    await worker.exitStatus()
                }
                if try await jobCount(client, state: .completed) < total { killsWhileDraining += 1 }
            }
            // Survivors finish the rest, rescuing the leases the killed workers left behind.
            let finishers = try (0..<2).map { _ in try spawn() }
            defer { for worker in finishers { worker.stopInBackground(SIGTERM) } }
            try await eventually("every job completed", timeout: .seconds(120), every: .milliseconds(100)) {
                try await jobCount(client, state: .completed) == total
            }
            #expect(killsWhileDraining >= 3, "kills should land while jobs are draining")
            #expect(try await effectCounts(client) == EffectCounts(rows: total, distinctJobs: total))
            for state in [JobState.available, .running, .retryable, .dead] {
                #expect(try await jobCount(client, state: state) == 0, "jobs left \(state.rawValue)")
            }
        }
    }
}
