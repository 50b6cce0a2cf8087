import Foundation
import ReclaimStore

/// What a call lane does with a call to Apple that did not succeed, for the calls that act on one subscription and
/// are recorded refused rather than retried for ever (extension grants, Set App Account Token): Apple's error that no
/// retry cures is the outcome; a key Apple refuses (401, or 403 without a code: revoked, or being rotated) is tried
/// again every 10 minutes for a day, then recorded; anything else (a 429, a 5xx, no answer) is retried by the queue
/// with backoff until its last attempt, which records it refused rather than leave it pending.
enum CallFailure {
    /// Recorded refused, with Apple's status and the reason in Apple's words.
    case refused(appleStatus: Int?, reason: String)
    /// Apple refused the key: try again after ``keyRetry``.
    case keyRefused(AppStoreAPIError)

    static let keyRetry: Duration = .seconds(600)
    /// How long a call waits for a key Apple refuses before it is recorded refused.
    static let keyWindow: TimeInterval = 86_400

    /// nil: rethrow `error` (the queue retries it; a lost lease leaves the call to the lane that holds it).
    static func of(_ error: any Error, job: Job, waitingSince: Date, now: Date) -> CallFailure? {
        if error is CallLease.Lost { return nil }
        if let apple = error as? AppStoreAPIError {
            if apple.isCredentialFailure {
                guard now.timeIntervalSince(waitingSince) > keyWindow else { return .keyRefused(apple) }
                return .refused(appleStatus: apple.status, reason: "not sent: Apple refused the key for a day; the last answer: \(apple)")
            }
            if apple.status != nil, !apple.isRetryable { return .refused(appleStatus: apple.status, reason: "\(apple)") }
        }
        guard job.attempt >= job.maxAttempts else { return nil }
        return .refused(appleStatus: (error as? AppStoreAPIError)?.status, reason: "not sent: \(error)")
    }
}
