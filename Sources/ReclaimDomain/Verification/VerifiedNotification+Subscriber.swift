import Foundation

extension VerifiedNotification {
    /// The subscription the notification is about: the transaction's originalTransactionId, else the renewal info's.
    public var originalTransactionId: String? {
        transaction?.originalTransactionId ?? renewalInfo?.originalTransactionId
    }

    /// The app's user id for the subscriber (appAccountToken) from the transaction, else the renewal info;
    /// nil when absent or not a UUID.
    public var appAccountToken: UUID? {
        (transaction?.appAccountToken ?? renewalInfo?.appAccountToken).flatMap(UUID.init(uuidString:))
    }
}
