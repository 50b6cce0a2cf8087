import Foundation
import Synchronization

/// Apple's rate limit as a stand-in of the App Store Server API enforces it, for tests and `scripts/bench backfill`:
/// at most `perSecond` requests admitted in any one-second window (sliding, so a burst at a second's boundary is
/// refused too); a refused request learns when the window will have room, as Apple's `Retry-After` says it ("a UNIX
/// time, in milliseconds").
public final class AppleRateWindow: Sendable {
    public let perSecond: Int
    private let state = Mutex<(admitted: [Date], refused: Int)>(([], 0))

    public init(perSecond: Int) {
        precondition(perSecond > 0)
        self.perSecond = perSecond
    }

    /// nil when the request is admitted; else the time its sender may try again.
    public func admit(now: Date = Date()) -> Date? {
        state.withLock { state in
            state.admitted.removeAll { now.timeIntervalSince($0) >= 1 }
            guard state.admitted.count >= perSecond else {
                state.admitted.append(now)
                return nil
            }
            state.refused += 1
            return state.admitted[0].addingTimeInterval(1)
        }
    }

    /// Requests refused so far.
    public var refused: Int { state.withLock { $0.refused } }
}
