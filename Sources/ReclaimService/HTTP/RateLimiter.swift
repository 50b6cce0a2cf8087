import Foundation
import Synchronization

/// Token buckets by key (an API key's id, a client's address): `rate` tokens a second up to `burst`.
/// Memory is bounded: past `maxKeys` buckets, full ones (keys quiet long enough to have refilled) are forgotten
/// first, then the fullest.
final class RateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    let rate: Double
    let burst: Double
    let maxKeys: Int
    private let buckets = Mutex<[String: Bucket]>([:])

    init(rate: Double, burst: Double, maxKeys: Int = 100_000) {
        self.rate = rate
        self.burst = burst
        self.maxKeys = maxKeys
    }

    /// Takes a token for `key`; nil when allowed, else the seconds until a token is available.
    func take(_ key: String, now: ContinuousClock.Instant = .now) -> Int? {
        buckets.withLock { buckets in
            var bucket = buckets[key] ?? Bucket(tokens: burst, updated: now)
            let elapsed = now - bucket.updated
            bucket.tokens = min(burst, bucket.tokens + rate * (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18))
            bucket.updated = now
            guard bucket.tokens >= 1 else {
                buckets[key] = bucket
                return max(1, Int(((1 - bucket.tokens) / rate).rounded(.up)))
            }
            bucket.tokens -= 1
            if buckets[key] == nil, buckets.count >= maxKeys { Self.evict(&buckets, now: now, rate: rate, burst: burst) }
            buckets[key] = bucket
            return nil
        }
    }

    /// Whether `key` may try now, without taking a token (to refuse before any work).
    func isLimited(_ key: String, now: ContinuousClock.Instant = .now) -> Bool {
        buckets.withLock { buckets in
            guard let bucket = buckets[key] else { return false }
            let elapsed = now - bucket.updated
            return bucket.tokens + rate * Double(elapsed.components.seconds) < 1
        }
    }

    private static func evict(_ buckets: inout [String: Bucket], now: ContinuousClock.Instant, rate: Double, burst: Double) {
        let full = buckets.filter { $0.value.tokens + rate * Double((now - $0.value.updated).components.seconds) >= burst }.map(\.key)
        if full.isEmpty, let fullest = buckets.max(by: { $0.value.tokens < $1.value.tokens })?.key {
            buckets[fullest] = nil
        } else {
            for key in full { buckets[key] = nil }
        }
    }
}
