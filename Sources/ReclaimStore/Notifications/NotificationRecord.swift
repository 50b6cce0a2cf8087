import Foundation
import ReclaimDomain

/// A verified notification, as stored in `reclaim.notifications`.
public struct NotificationRecord: Sendable, Equatable {
    public var notificationUUID: UUID
    public var notificationType: String
    public var subtype: String?
    public var bundleId: String
    public var environment: String
    /// Apple's signedDate, UNIX milliseconds.
    public var signedDateMillis: Int64
    public var originalTransactionId: String?
    public var transactionId: String?
    public var appAccountToken: UUID?
    public var productId: String?
    /// The raw signedPayload JWS.
    public var signedPayload: String
    /// How the body around it looked, for the app's forwarding targets; nil when the app forwards nowhere.
    public var received: ReceivedBody?

    public init(
        notificationUUID: UUID,
        notificationType: String,
        subtype: String?,
        bundleId: String,
        environment: String,
        signedDateMillis: Int64,
        originalTransactionId: String?,
        transactionId: String?,
        appAccountToken: UUID?,
        productId: String?,
        signedPayload: String,
        received: ReceivedBody? = nil
    ) {
        self.notificationUUID = notificationUUID
        self.notificationType = notificationType
        self.subtype = subtype
        self.bundleId = bundleId
        self.environment = environment
        self.signedDateMillis = signedDateMillis
        self.originalTransactionId = originalTransactionId
        self.transactionId = transactionId
        self.appAccountToken = appAccountToken
        self.productId = productId
        self.signedPayload = signedPayload
        self.received = received
    }
}
