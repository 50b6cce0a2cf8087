import Foundation

/// A job to add to the queue.
public struct NewJob: Sendable {
    public var kind: String
    public var payload: String
    public var notificationUUID: UUID?
    public var priority: Int16
    public var runAt: Date?
    public var maxAttempts: Int
    /// The queue's default (reclaim.jobs.max_attempts).
    public static let defaultMaxAttempts = 20

    public init(
        kind: String,
        payload: String = "{}",
        notificationUUID: UUID? = nil,
        priority: Int16 = 0,
        runAt: Date? = nil,
        maxAttempts: Int = Self.defaultMaxAttempts
    ) {
        self.kind = kind
        self.payload = payload
        self.notificationUUID = notificationUUID
        self.priority = priority
        self.runAt = runAt
        self.maxAttempts = maxAttempts
    }
}
