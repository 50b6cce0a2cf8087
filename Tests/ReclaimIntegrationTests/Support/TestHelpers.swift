import Foundation
import PostgresNIO
import ReclaimStore
import ReclaimTestSupport
import Synchronization

/// The first column of the first row as an Int: nil when there is no row or it is NULL.
func firstInt(_ client: Database, _ sql: String) async throws -> Int? {
    for try await value in try await client.query(PostgresQuery(unsafeSQL: sql), logger: TestPostgres.logger).decode(Int?.self) { return value }
    return nil
}

/// Lines written from any task, for tests that read what a log handler or a command reported.
final class LineCollector: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

/// Runs blocking `work` (a subprocess waited for) on a thread of its own. On the cooperative pool (two threads on this
/// machine) a wait of seconds stalls every task of the test process, other suites' timeouts included.
func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}

/// Runs a program to its end: its exit status, standard output and standard error (awaited, holding no thread).
func runProcess(_ executable: String, _ arguments: [String], input: Data? = nil) async throws -> (status: Int32, output: String, errors: String) {
    try await Subprocess.run(executable, arguments, input: input)
}
