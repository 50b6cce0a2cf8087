import Foundation

/// A notification whose outer JWS and nested transaction and renewal JWS all verified, decoded.
public struct VerifiedNotification: Sendable, Equatable {
    public var payload: NotificationPayload
    /// Decoded `data.signedTransactionInfo`, verified at its own `signedDate`.
    public var transaction: TransactionInfo?
    /// Decoded `data.signedRenewalInfo`, verified at its own `signedDate`.
    public var renewalInfo: RenewalInfo?
    /// The outer payload's JSON exactly as Apple signed it (for storage).
    public var payloadJSON: Data
    /// The nested transaction's JSON exactly as signed.
    public var transactionJSON: Data?
    /// The nested renewal info's JSON exactly as signed.
    public var renewalInfoJSON: Data?
    /// Decoded `appData.signedAppTransactionInfo` (RESCIND_CONSENT), verified.
    public var appTransaction: AppTransactionInfo?

    public init(
        payload: NotificationPayload,
        transaction: TransactionInfo? = nil,
        renewalInfo: RenewalInfo? = nil,
        payloadJSON: Data,
        transactionJSON: Data? = nil,
        renewalInfoJSON: Data? = nil
    ) {
        self.payload = payload
        self.transaction = transaction
        self.renewalInfo = renewalInfo
        self.payloadJSON = payloadJSON
        self.transactionJSON = transactionJSON
        self.renewalInfoJSON = renewalInfoJSON
    }
}
