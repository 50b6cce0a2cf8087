import Foundation

/// Threads of the tests' own, outside Swift's cooperative pool, for work that runs long without a suspension point.
///
/// The pool has one thread per core: two here. A test that spends a second on synchronous work (a regular expression
/// over every page of the docs, thousands of decodes in a debug build) holds one of them that long, and two such
/// tests hold the whole pool: every timer of every other test fires late, and the pool watchdog fails the run. Run
/// here (``onTestThreads(_:)``, or the integration suites' `.onTestThreads` trait), the same work is one more thread
/// that the kernel shares the cores with, time slice by time slice, and the pool's threads stay free.
///
/// A task executor (SE-0417): the task keeps its task-local values (Swift Testing's current test, so `#expect`
/// records where it should), and its child tasks prefer these threads too.
public final class TestThreads: TaskExecutor, @unchecked Sendable {
    /// As many as the pool has: more long tests than that at once wait their turn here, not on the pool.
    public static let shared = TestThreads(count: ProcessInfo.processInfo.activeProcessorCount)

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var threads: [pthread_t] = []

    private init(count: Int) {
        for index in 0..<max(count, 1) {
            let thread = Thread { [unowned self] in
                self.condition.lock()
                self.threads.append(pthread_self())
                self.condition.unlock()
                self.serve()
            }
            thread.name = "test thread \(index)"
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    /// Whether the caller runs on one of these threads.
    public func isCurrent() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return threads.contains { pthread_equal($0, pthread_self()) != 0 }
    }

    public func enqueue(_ job: UnownedJob) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// The threads live as long as the process: a job may be enqueued at any time, and one that found no thread
    /// would never run.
    private func serve() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

/// Runs `body` on ``TestThreads``, off the cooperative pool: for a test's synchronous work that runs long.
public func onTestThreads<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
    try await withTaskExecutorPreference(TestThreads.shared) { try await body() }
}
