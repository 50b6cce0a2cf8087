import Foundation

/// A grant made earlier, with the offer it issued: what a repeated request with its Idempotency-Key gets back.
public struct StoredGrant: Sendable, Equatable {
    public var id: UUID
    public var request: GrantRequest
    public var offerId: UUID?
    public var originalTransactionId: String?
    public var environment: String?
    public var deliverableUntil: Date?
    public var createdAt: Date

    public init(
        id: UUID,
        request: GrantRequest,
        offerId: UUID?,
        originalTransactionId: String?,
        environment: String?,
        deliverableUntil: Date?,
        createdAt: Date
    ) {
        self.id = id
        self.request = request
        self.offerId = offerId
        self.originalTransactionId = originalTransactionId
        self.environment = environment
        self.deliverableUntil = deliverableUntil
        self.createdAt = createdAt
    }
}
