import Foundation

/// A job claimed by a worker: what to run and which attempt this is.
public struct Job: Sendable, Equatable {
    public let id: Int64
    public let kind: String
    /// Handler arguments (JSON text).
    public let payload: String
    public let notificationUUID: UUID?
    /// 1 for the first run.
    public let attempt: Int
    public let maxAttempts: Int

    public init(id: Int64, kind: String, payload: String, notificationUUID: UUID?, attempt: Int, maxAttempts: Int) {
        self.id = id
        self.kind = kind
        self.payload = payload
        self.notificationUUID = notificationUUID
        self.attempt = attempt
        self.maxAttempts = maxAttempts
    }
}

/// The states of `reclaim.jobs.state`.
public enum JobState: String, Sendable, CaseIterable {
    case available, running, retryable, completed, dead
}

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
