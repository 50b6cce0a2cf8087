/// Thrown by ``within(_:_:)`` when the time passes first.
public struct TimeoutError: Error, CustomStringConvertible {
    public let after: Duration
    public var description: String { "no answer within \(after)" }
}

/// Runs `body` and answers with its result, or with ``TimeoutError`` once `timeout` has passed, whichever comes
/// first; the body is then cancelled but not waited for. A task group would wait for it, and a PostgresNIO query
/// on a dead connection ignores cancellation, so such a timeout would never fire (see ``Database``).
public func within<T: Sendable>(_ timeout: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    let answer = FirstAnswer<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            answer.wait(continuation)
            if answer.isAnswered { return }
            let work = Task { answer.give(await Result(catching: body)) }
            let timer = Task {
                try await Task.sleep(for: timeout)
                work.cancel()
                answer.give(.failure(TimeoutError(after: timeout)))
            }
            answer.onAnswer {
                timer.cancel()
                work.cancel()
            }
        }
    } onCancel: {
        answer.give(.failure(CancellationError()))
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
