/// Retry delay after a failed attempt: exponential (1 s, 2 s, 4 s, … capped at 1 hour) with
/// ±25 % jitter, so that jobs failing together do not retry in lockstep.
public struct Backoff: Sendable {
    public var base: Double = 1
    public var cap: Double = 3600

    public init(base: Double = 1, cap: Double = 3600) {
        self.base = base
        self.cap = cap
    }

    /// Seconds to wait after attempt number `attempt` (1-based) failed; `unit` is a random number in 0..<1.
    public func delay(afterAttempt attempt: Int, unit: Double) -> Double {
        let exponential = min(cap, base * Double(1 << min(max(attempt - 1, 0), 30)))
        return exponential * (0.75 + 0.5 * unit)
    }
}
