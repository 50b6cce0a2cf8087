import Foundation

/// When to send an App Store Server API request again: after 5xx, Apple's retryable error codes and lost connections,
/// with exponential backoff and full jitter, honouring `Retry-After`; after a 429 once its `Retry-After` has passed.
struct AppStoreRetryPolicy: Sendable {
    /// Attempts in all, the first included.
    var maxAttempts = 5
    var baseDelay: Duration = .milliseconds(500)
    var maxDelay: Duration = .seconds(30)
    /// How long one call may take in all, retries and Apple's `Retry-After` pauses included: a wait that would end
    /// later fails the call instead of holding a command or a worker.
    var deadline: Duration = .seconds(120)

    /// The wait before attempt `attempt + 1` (attempt counts from 1).
    func backoff(after attempt: Int) -> Duration {
        let ceiling = min(maxDelay, baseDelay * (1 << min(attempt - 1, 16)))
        return .nanoseconds(Int64.random(in: 0...max(1, ceiling.nanoseconds)))
    }

    /// The wait a `Retry-After` header asks for. Apple sends an absolute UNIX time in **milliseconds**
    /// (App Store Server API, *Identifying rate limits*); a small number is read as RFC 9110's seconds to wait,
    /// which proxies send.
    static func retryAfter(_ header: String?, now: Date = Date()) -> Duration? {
        guard let header, let value = Int64(header.trimmingCharacters(in: .whitespaces)), value >= 0 else { return nil }
        if value > 1_000_000_000_000 {
            let milliseconds = value - Int64(now.timeIntervalSince1970 * 1000)
            return .milliseconds(max(0, milliseconds))
        }
        return .seconds(value)
    }
}
