import Foundation

/// An API key as `reclaim apps list` shows it: never the key, only its prefix.
public struct APIKeyRecord: Sendable, Equatable {
    public let id: UUID
    public let scope: APIKeyStore.Scope
    public let bundleId: String?
    public let prefix: String
    public let name: String?
    public let createdAt: Date
    public let revokedAt: Date?
}
