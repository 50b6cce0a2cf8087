import ReclaimStore
import Testing

@Suite("within: a timeout that does not wait for its body")
struct WithinTests {
    @Test("a body that ignores cancellation and never ends is answered TimeoutError at the timeout")
    func stuckBody() async throws {
        let started = ContinuousClock.now
        await #expect(throws: TimeoutError.self) {
            // What a PostgresNIO query on a closed connection does: never resumes, whatever cancellation says.
            try await within(.milliseconds(200)) { await withCheckedContinuation { (_: CheckedContinuation<Void, Never>) in } }
        }
        // At the timeout, give or take a busy machine; before, a task group waited for the body: never. The bound
        // catches "never" only: with the whole suite starting on two slow cores, the 200 ms timer has fired after 40 s.
        #expect(ContinuousClock.now - started < .seconds(120))
    }

    @Test("a body that ends in time answers with its result or its error")
    func inTime() async throws {
        #expect(try await within(.seconds(5)) { 42 } == 42)
        struct Failure: Error {}
        await #expect(throws: Failure.self) { try await within(.seconds(5)) { throw Failure() } }
    }
}
