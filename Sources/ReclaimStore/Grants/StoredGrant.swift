import Foundation
import ReclaimDomain

/// A grant made earlier, with the offer it issued: what a repeated request with its Idempotency-Key gets back.
public struct StoredGrant: Sendable, Equatable {
    public var id: UUID
    public var request: GrantRequest
    public var offerId: UUID?
    public var originalTransactionId: String?
    public var environment: String?
    public var deliverableUntil: Date?
    public var createdAt: Date
    /// ``GrantRequest/fingerprint`` of the request; nil for grants made before schema 9.
    public var requestSHA256: [UInt8]?

    public init(
        id: UUID,
        request: GrantRequest,
        offerId: UUID?,
        originalTransactionId: String?,
        environment: String?,
        deliverableUntil: Date?,
        createdAt: Date,
        requestSHA256: [UInt8]?
    ) {
        self.id = id
        self.request = request
        self.offerId = offerId
        self.originalTransactionId = originalTransactionId
        self.environment = environment
        self.deliverableUntil = deliverableUntil
        self.createdAt = createdAt
        self.requestSHA256 = requestSHA256
    }

    /// Whether `other` is the request this grant was made for: its whole normalized request. A grant made before
    /// schema 9 stored no fingerprint, and is compared on the fields it stored.
    public func isSameRequest(as other: GrantRequest) -> Bool {
        if let requestSHA256 { return requestSHA256 == other.fingerprint }
        return request.bundleId == other.bundleId && request.appAccountToken == other.appAccountToken
            && request.originalTransactionId == other.originalTransactionId && request.productId == other.productId
            && request.offerIdentifier == other.offerIdentifier && request.reason == other.reason && request.campaign == other.campaign
    }
}
