import Foundation

/// A job to add to the queue.
public struct NewJob: Sendable {
    public var kind: String
    public var payload: String
    public var notificationUUID: UUID?
    public var priority: Int16
    public var runAt: Date?
    public var maxAttempts: Int

    public init(kind: String, payload: String = "{}", notificationUUID: UUID? = nil, priority: Int16 = 0, runAt: Date? = nil, maxAttempts: Int = 20) {
        self.kind = kind
        self.payload = payload
        self.notificationUUID = notificationUUID
        self.priority = priority
        self.runAt = runAt
        self.maxAttempts = maxAttempts
    }
}
