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
