import Foundation

struct DeadlineExceeded: Error, CustomStringConvertible {
    let description: String
}

/// Polls `condition` until it holds, failing after `timeout`: tests wait on conditions, never on sleeps.
func eventually(
    _ what: String,
    timeout: Duration = .seconds(60),
    every interval: Duration = .milliseconds(20),
    _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: interval)
    }
    throw DeadlineExceeded(description: "timed out after \(timeout) waiting for: \(what)")
}
