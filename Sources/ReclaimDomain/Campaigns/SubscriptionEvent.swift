import Foundation

/// The notification being processed, as the campaign rules and the offer lifecycle see it.
public struct SubscriptionEvent: Sendable, Equatable {
    public var notificationUUID: UUID
    public var type: String
    public var subtype: String?
    public var signedDate: Date
    /// The verified transaction the notification carries, if any (redemptions are read from it).
    public var transaction: TransactionInfo?

    public init(notificationUUID: UUID, type: String, subtype: String? = nil, signedDate: Date, transaction: TransactionInfo? = nil) {
        self.notificationUUID = notificationUUID
        self.type = type
        self.subtype = subtype
        self.signedDate = signedDate
        self.transaction = transaction
    }

    public init(_ snapshot: SubscriptionSnapshot) {
        self.init(
            notificationUUID: snapshot.notificationUUID,
            type: snapshot.notificationType,
            subtype: snapshot.subtype,
            signedDate: snapshot.signedDate,
            transaction: snapshot.transaction
        )
    }
}
