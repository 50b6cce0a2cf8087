import Crypto
import Foundation
import Logging
import PostgresNIO
import ReclaimDomain
import ReclaimStore

/// `reclaim backfill`: seeds subscription state for subscribers Reclaim has never heard of (a new installation,
/// or notifications older than Apple's history), from Get All Subscription Statuses.
///
/// Each transaction id's subscriptions are verified (signed transaction and renewal info, the same chain checks
/// as notifications) and applied like a notification would be. By default as a snapshot of type `BACKFILL` that
/// no campaign triggers on: backfill informs state, it sends nobody an offer. With `evaluate`, as the
/// notification the status implies (expired by the subscriber's choice is EXPIRED/VOLUNTARY, auto-renew off is
/// DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED, …), stored with source `backfill` so the campaigns' decisions
/// can refer to it, and evaluated by the campaigns like a notification from Apple.
/// A newer notification always wins (state moves only forward by signedDate). Each id is recorded in
/// `reclaim.backfill_transactions` in the same transaction as its state and decisions, so a second run after an
/// interruption skips what was done and redoes nothing.
public enum Backfill {
    public struct Counts: Sendable, Equatable {
        public var seeded = 0
        public var skipped = 0
        public var notFound = 0
        public var subscriptions = 0
    }

    public static func run(
        config: ReclaimConfig,
        url: DatabaseURL,
        app bundleId: String,
        transactionIds: [String],
        evaluate: Bool = false,
        logger: Logger,
        report: @escaping @Sendable (String) -> Void
    ) async throws -> Counts {
        guard let app = config.apps.first(where: { $0.bundleId == bundleId }) else { throw ConfigError("app \(bundleId) is not configured") }
        let environments = ["Production", "Sandbox"].filter(app.environments.contains)
        guard !environments.isEmpty else { throw ConfigError("app \(bundleId) accepts neither Production nor Sandbox") }
        return try await RecoveryTasks.withDependencies(config: config, url: url, logger: logger) { dependencies, http in
            let clients = try environments.map { try AppStoreServerAPIClient(app: app, environment: $0, http: http, logger: logger) }
            let engine = evaluate ? dependencies.campaignEngine : CampaignEngine(campaigns: [], issuer: dependencies.issuer)
            let done = try await dependencies.postgres.withConnection(logger: logger) {
                try await BackfillStore.done(bundleId: bundleId, connection: $0, logger: logger)
            }
            var counts = Counts()
            for (index, id) in transactionIds.enumerated() {
                guard !done.contains(id) else {
                    counts.skipped += 1
                    continue
                }
                var found: (environment: String, snapshots: [(SubscriptionSnapshot, String)])?
                for client in clients {
                    do {
                        let statuses = try await client.subscriptionStatuses(transactionId: id)
                        found = (
                            client.environment, try await snapshots(statuses, bundleId: bundleId, evaluate: evaluate, verifier: dependencies.verifier)
                        )
                        break
                    } catch let error as AppStoreAPIError where error.status == 404 {
                        continue  // Not in this environment (4040010): try the next one.
                    }
                }
                let answer = found
                try await dependencies.postgres.transaction(logger: logger) { connection in
                    for (snapshot, signedTransaction) in answer?.snapshots ?? [] {
                        if snapshot.notificationType != Self.stateOnly {
                            let implied = NotificationRecord(
                                notificationUUID: snapshot.notificationUUID,
                                notificationType: snapshot.notificationType,
                                subtype: snapshot.subtype,
                                bundleId: snapshot.bundleId,
                                environment: snapshot.environment,
                                signedDateMillis: Int64((snapshot.signedDate.timeIntervalSince1970 * 1000).rounded()),
                                originalTransactionId: snapshot.originalTransactionId,
                                transactionId: snapshot.transaction?.transactionId,
                                appAccountToken: snapshot.appAccountToken,
                                productId: snapshot.transaction?.productId,
                                signedPayload: signedTransaction
                            )
                            let stored = try await NotificationStore.insertProcessedHere(
                                implied,
                                source: "backfill",
                                connection: connection,
                                logger: logger
                            )
                            guard stored else { continue }  // Evaluated by an earlier backfill of the same answer.
                        }
                        try await engine.process(snapshot, connection: connection, logger: logger)
                    }
                    try await BackfillStore.record(
                        bundleId: bundleId,
                        transactionId: id,
                        environment: answer?.environment,
                        subscriptions: answer?.snapshots.count ?? 0,
                        result: answer == nil ? "not found" : "seeded",
                        connection: connection,
                        logger: logger
                    )
                }
                if let found {
                    counts.seeded += 1
                    counts.subscriptions += found.snapshots.count
                } else {
                    counts.notFound += 1
                    report("\(id): Apple knows no such transaction in \(environments.joined(separator: " or "))")
                }
                if (index + 1) % 100 == 0 || index + 1 == transactionIds.count {
                    report(
                        "\(index + 1)/\(transactionIds.count) transaction ids: \(counts.seeded) seeded, \(counts.skipped) done before, \(counts.notFound) not found"
                    )
                }
            }
            return counts
        }
    }

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
        case 1: renewal?.autoRenewStatus == 0 ? ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED") : nil
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
