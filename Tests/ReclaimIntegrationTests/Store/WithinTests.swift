import ReclaimStore
import ReclaimTestSupport
import Testing

@Suite("within: a timeout that does not wait for its body", .poolWatchdog)
struct WithinTests {
    @Test("a body that ignores cancellation and never ends is answered TimeoutError at the timeout")
    func stuckBody() async throws {
        let started = ContinuousClock.now
        await #expect(throws: TimeoutError.self) {
            // What a PostgresNIO query on a closed connection does: never resumes, whatever cancellation says.
            try await within(.milliseconds(200)) { await withCheckedContinuation { (_: CheckedContinuation<Void, Never>) in } }
        }
        // At the timeout; before, a task group waited for the body: never. A timer many times late means something
        // blocks the cooperative pool (the pool watchdog names it).
        #expect(ContinuousClock.now - started < .seconds(2))
    }

    @Test("a body that ends in time answers with its result or its error")
    func inTime() async throws {
        #expect(try await within(.seconds(5)) { 42 } == 42)
        struct Failure: Error {}
        await #expect(throws: Failure.self) { try await within(.seconds(5)) { throw Failure() } }
    }
}
