import Crypto
import Foundation

/// The control group of a campaign: a stable pseudo-random bucket per subscription and campaign, so the same
/// subscriber is always in or out of a campaign's holdout (on every worker, after every restart), and
/// different campaigns hold out independent groups.
public enum Holdout {
    /// Buckets are basis points: 0..<10_000.
    public static let buckets = 10_000

    /// SHA-256 of `originalTransactionId NUL campaignId`, first 8 bytes big-endian, modulo 10,000.
    public static func bucket(originalTransactionId: String, campaignId: String) -> Int {
        let digest = SHA256.hash(data: Data((originalTransactionId + "\u{0}" + campaignId).utf8))
        let value = digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return Int(value % UInt64(buckets))
    }

    /// Whether the subscriber is in the campaign's holdout of `percent` percent.
    public static func isHeldOut(originalTransactionId: String, campaignId: String, percent: Int) -> Bool {
        bucket(originalTransactionId: originalTransactionId, campaignId: campaignId) < percent * (buckets / 100)
    }
}
