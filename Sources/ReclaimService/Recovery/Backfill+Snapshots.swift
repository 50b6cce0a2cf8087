import Crypto
import Foundation
import ReclaimDomain

/// What Get All Subscription Statuses answered, as the snapshots a backfill applies.
extension Backfill {
    /// The notification type of a snapshot that only seeds state.
    static let stateOnly = "BACKFILL"

    /// One snapshot per subscription in the answer (with its signed transaction info), each verified in full;
    /// throws when any fails verification.
    static func snapshots(
        _ statuses: AppStoreAPI.StatusResponse,
        bundleId: String,
        evaluate: Bool,
        verifier: AppleJWSVerifier
    ) async throws -> [(SubscriptionSnapshot, String)] {
        if let answered = statuses.bundleId, answered != bundleId {
            throw AppStoreAPIError(
                status: 200,
                errorCode: nil,
                description: "Get All Subscription Statuses answered for \(answered), not \(bundleId)"
            )
        }
        var snapshots: [(SubscriptionSnapshot, String)] = []
        for group in statuses.data {
            for last in group.lastTransactions {
                guard let signedTransaction = last.signedTransactionInfo else { continue }
                let transaction = try await verifier.verifyTransaction(signedTransaction)
                let renewal = try await last.signedRenewalInfo.asyncMap { try await verifier.verifyRenewalInfo($0, bundleId: bundleId) }
                guard transaction.bundleId == bundleId, let originalTransactionId = transaction.originalTransactionId,
                    let environment = transaction.environment?.rawValue
                else { continue }
                let signedDate = transaction.signedDate.map(Date.init(unixMilliseconds:)) ?? Date()
                let implied = evaluate ? impliedNotification(status: last.status, renewal: renewal) : nil
                snapshots.append(
                    (
                        SubscriptionSnapshot(
                            bundleId: bundleId,
                            environment: environment,
                            originalTransactionId: originalTransactionId,
                            notificationType: implied?.type ?? stateOnly,
                            subtype: implied?.subtype,
                            signedDate: signedDate,
                            notificationUUID: uuid(for: "backfill|\(bundleId)|\(originalTransactionId)|\(signedTransaction.suffix(86))"),
                            appleStatus: last.status,
                            transaction: transaction,
                            renewalInfo: renewal
                        ),
                        signedTransaction
                    )
                )
            }
        }
        return snapshots
    }

    /// The notification Apple would have sent for a subscription in this status: what campaigns trigger on.
    /// nil for an active subscription that renews (nothing to win back or retain).
    static func impliedNotification(status: Int64?, renewal: RenewalInfo?) -> (type: String, subtype: String?)? {
        switch status {
        // A monthly plan whose 12-month commitment will not renew counts too: Apple keeps its autoRenewStatus at 1 (the
        // next month is billed) and says "read commitmentAutoRenewStatus to confirm the commitment doesn't renew" — what
        // DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED announced. The engine defers it to commitmentLead before the end.
        case 1:
            renewal?.autoRenewStatus == 0 || renewal?.commitmentInfo?.commitmentAutoRenewStatus == 0
                ? ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED") : nil
        case 2:
            switch renewal?.expirationIntent {
            case 1: ("EXPIRED", "VOLUNTARY")
            case 2: ("EXPIRED", "BILLING_RETRY")
            case 3: ("EXPIRED", "PRICE_INCREASE")
            case 4: ("EXPIRED", "PRODUCT_NOT_FOR_SALE")
            default: ("EXPIRED", nil)
            }
        case 3: ("DID_FAIL_TO_RENEW", nil)
        case 4: ("DID_FAIL_TO_RENEW", "GRACE_PERIOD")
        case 5: ("REVOKE", nil)
        default: nil
        }
    }

    /// A stable UUID for a backfilled snapshot (the same answer gives the same id), marked as a name-based UUID.
    static func uuid(for name: String) -> UUID {
        var bytes = Array(SHA256.hash(data: Data(name.utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x50
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9], bytes[10], bytes[11], bytes[12],
                bytes[13], bytes[14], bytes[15]
            )
        )
    }
}

extension Optional {
    fileprivate func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let self else { return nil }
        return try await transform(self)
    }
}
