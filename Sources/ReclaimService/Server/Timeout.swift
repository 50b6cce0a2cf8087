/// Thrown by `withTimeout` when the deadline passes first.
struct TimeoutError: Error {}

/// Runs `body`, cancelling it and throwing `TimeoutError` when it takes longer than `timeout`.
func withTimeout<T: Sendable>(_ timeout: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            throw TimeoutError()
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}
