import Crypto
import Foundation
import ReclaimDomain

/// What Get All Subscription Statuses answered, as the snapshots a backfill applies.
extension Backfill {
    /// The notification type of a snapshot that only seeds state.
    static let stateOnly = "BACKFILL"

    /// One subscription of Apple's answer: its snapshot, and the signed transaction and renewal info it came from
    /// (kept in `reclaim.backfill_answers`, so a later `--evaluate` decides without asking Apple again).
    struct Imported: Sendable {
        var snapshot: SubscriptionSnapshot
        var signedTransaction: String
        var signedRenewal: String?
    }

    /// One snapshot per subscription in the answer (with its signed transaction info), each verified in full;
    /// throws when any fails verification.
    static func snapshots(
        _ statuses: AppStoreAPI.StatusResponse,
        bundleId: String,
        evaluate: Bool,
        verifier: AppleJWSVerifier
    ) async throws -> [Imported] {
        if let answered = statuses.bundleId, answered != bundleId {
            throw AppStoreAPIError(
                status: 200,
                errorCode: nil,
                description: "Get All Subscription Statuses answered for \(answered), not \(bundleId)"
            )
        }
        var imported: [Imported] = []
        for group in statuses.data {
            for last in group.lastTransactions {
                guard let signedTransaction = last.signedTransactionInfo else { continue }
                if let one = try await snapshot(
                    signedTransaction: signedTransaction,
                    signedRenewal: last.signedRenewalInfo,
                    status: last.status,
                    bundleId: bundleId,
                    evaluate: evaluate,
                    verifier: verifier
                ) {
                    imported.append(one)
                }
            }
        }
        return imported
    }

    /// One subscription of an answer, Apple's or kept: both JWS verified in full (the kept ones again: nothing read
    /// back from the database is trusted unverified); nil when it is not of this app.
    static func snapshot(
        signedTransaction: String,
        signedRenewal: String?,
        status: Int64?,
        bundleId: String,
        evaluate: Bool,
        verifier: AppleJWSVerifier
    ) async throws -> Imported? {
        let transaction = try await verifier.verifyTransaction(signedTransaction)
        let renewal = try await signedRenewal.asyncMap { try await verifier.verifyRenewalInfo($0, bundleId: bundleId) }
        guard transaction.bundleId == bundleId, let originalTransactionId = transaction.originalTransactionId,
            let environment = transaction.environment?.rawValue
        else { return nil }
        let signedDate = transaction.signedDate.map(Date.init(unixMilliseconds:)) ?? Date()
        let implied = evaluate ? impliedNotification(status: status, renewal: renewal) : nil
        return Imported(
            snapshot: SubscriptionSnapshot(
                bundleId: bundleId,
                environment: environment,
                originalTransactionId: originalTransactionId,
                notificationType: implied?.type ?? stateOnly,
                subtype: implied?.subtype,
                signedDate: signedDate,
                notificationUUID: uuid(for: "backfill|\(bundleId)|\(originalTransactionId)|\(signedTransaction.suffix(86))"),
                appleStatus: status,
                transaction: transaction,
                renewalInfo: renewal
            ),
            signedTransaction: signedTransaction,
            signedRenewal: signedRenewal
        )
    }

    /// The notification a subscription's state now implies: what an import's campaigns trigger on when they decide
    /// after the import (`reclaim backfill --evaluate` of imported ids), from the state at the decision, so that a
    /// notification since the import (auto-renew back on, a renewal) is what counts. As
    /// ``impliedNotification(status:renewal:)`` reads Apple's status, from the fields the state keeps of it.
    static func impliedNotification(state: SubscriptionState) -> (type: String, subtype: String?)? {
        switch state.status {
        case .active:
            state.autoRenew == false || state.commitmentAutoRenew == false ? ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED") : nil
        case .expired:
            switch state.expirationIntent {
            case 1: ("EXPIRED", "VOLUNTARY")
            case 2: ("EXPIRED", "BILLING_RETRY")
            case 3: ("EXPIRED", "PRICE_INCREASE")
            case 4: ("EXPIRED", "PRODUCT_NOT_FOR_SALE")
            default: ("EXPIRED", nil)
            }
        case .billingRetry: ("DID_FAIL_TO_RENEW", nil)
        case .gracePeriod: ("DID_FAIL_TO_RENEW", "GRACE_PERIOD")
        case .revoked: ("REVOKE", nil)
        case .refunded, .unknown: nil
        }
    }

    /// Every notification ``impliedNotification(status:renewal:)`` can imply.
    static let impliedNotifications: [(type: String, subtype: String?)] = [
        ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED"), ("EXPIRED", "VOLUNTARY"), ("EXPIRED", "BILLING_RETRY"),
        ("EXPIRED", "PRICE_INCREASE"), ("EXPIRED", "PRODUCT_NOT_FOR_SALE"), ("EXPIRED", nil), ("DID_FAIL_TO_RENEW", nil),
        ("DID_FAIL_TO_RENEW", "GRACE_PERIOD"), ("REVOKE", nil),
    ]

    /// Whether an import with `--evaluate` can trigger this campaign (`campaigns check` warns when it has no time bound).
    static func canFire(_ campaign: NotificationCampaign) -> Bool {
        impliedNotifications.contains { campaign.trigger.matches(type: $0.type, subtype: $0.subtype) }
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
