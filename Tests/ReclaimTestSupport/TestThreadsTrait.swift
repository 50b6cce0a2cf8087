import Testing

/// `.onTestThreads` on a suite whose tests run long without a suspension point (regular expressions over the docs,
/// parsing every file): they run on ``TestThreads``, off the cooperative pool, which they would otherwise hold
/// (``PoolWatchdog``).
public struct TestThreadsTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        guard testCase != nil else { return try await function() }
        try await ReclaimTestSupport.onTestThreads { try await function() }
    }
}

extension Trait where Self == TestThreadsTrait {
    /// Runs the suite's tests off the cooperative pool (``TestThreads``).
    public static var onTestThreads: Self { TestThreadsTrait() }
}
