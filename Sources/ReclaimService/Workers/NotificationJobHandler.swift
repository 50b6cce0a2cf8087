import Foundation
import Logging
import Metrics
import PostgresNIO
import ReclaimDomain
import ReclaimStore

/// Processes stored notifications: reads a batch's signed payloads in one query, verifies each notification's
/// nested transaction and renewal info (the chain cache makes that one ECDSA verification per JWS; the outer
/// payload was verified by ingest before it was stored) and hands the batch to the campaign engine, in the
/// batch's transaction.
struct NotificationJobHandler: JobHandler {
    let verifier: AppleJWSVerifier
    let engine: CampaignEngine
    /// Refund requests and their outcomes, recorded in the same transaction.
    var refunds: RefundRequests?

    struct MissingNotification: Error, CustomStringConvertible {
        let description: String
    }

    /// RESCIND_CONSENT names no transaction: its signed app transaction's `appTransactionId` names the app account,
    /// whose subscriptions get no campaign, grant or cancel-sheet answer from then on (``ConsentStore``).
    func rescindConsent(_ notification: VerifiedNotification, uuid: UUID, connection: PostgresConnection, logger: Logger) async throws {
        let payload = notification.payload
        guard payload.notificationType.rawValue == "RESCIND_CONSENT" else { return }
        guard let appTransactionId = notification.appTransaction?.appTransactionId, let bundleId = payload.bundleId,
            let environment = payload.environment?.rawValue
        else {
            logger.warning("a RESCIND_CONSENT without an app transaction id: no app account to restrict", metadata: ["notificationUUID": "\(uuid)"])
            return
        }
        let rescission = ConsentStore.Rescission(
            bundleId: bundleId,
            environment: environment,
            appTransactionId: appTransactionId,
            rescindedAt: payload.signedDate.map(Date.init(unixMilliseconds:)) ?? Date(),
            notificationUUID: uuid
        )
        let (subscriptions, withdrawn) = try await ConsentStore.rescind(rescission, connection: connection, logger: logger)
        Counter(label: "reclaim_offers_withdrawn_total").increment(by: withdrawn)
        logger.notice(
            "consent rescinded (RESCIND_CONSENT): no campaign reaches the app account again",
            metadata: ["notificationUUID": "\(uuid)", "subscriptions": "\(subscriptions)", "offersWithdrawn": "\(withdrawn)"]
        )
    }

    /// RENEWAL_EXTENSION/SUMMARY: Apple's account of a mass extension (`reclaim extensions all`), matched to the
    /// request by its `requestIdentifier` ("Use the same requestIdentifier in ... The summary object").
    func matchMassExtensionSummary(_ notification: VerifiedNotification, uuid: UUID, connection: PostgresConnection, logger: Logger) async throws {
        guard notification.payload.notificationType == .renewalExtension, let summary = notification.payload.summary else { return }
        let matched = try await MassExtensionStore.matchSummary(summary, notificationUUID: uuid, connection: connection, logger: logger)
        logger.notice(
            matched
                ? "Apple's summary of a renewal-date extension for all active subscribers"
                : "Apple's summary of a renewal-date extension Reclaim did not request (stored, matched to nothing)",
            metadata: [
                "notificationUUID": "\(uuid)", "requestIdentifier": "\(LogText.bounded(summary.requestIdentifier ?? "", limit: 128))",
                "succeeded": "\(summary.succeededCount ?? 0)", "failed": "\(summary.failedCount ?? 0)",
            ]
        )
    }

    func handle(_ job: Job, connection: PostgresConnection, logger: Logger) async throws {
        try await handle(batch: [job], connection: connection, logger: logger)
    }

    func handle(batch jobs: [Job], connection: PostgresConnection, logger: Logger) async throws {
        let payloads = try await NotificationStore.signedPayloads(of: jobs.compactMap(\.notificationUUID), connection: connection, logger: logger)
        var snapshots: [SubscriptionSnapshot] = []
        var forgotten: [UUID] = []
        for job in jobs {
            guard let uuid = job.notificationUUID, let stored = payloads[uuid] else {
                throw MissingNotification(description: "job \(job.id) names no stored notification")
            }
            // About a subscriber forgotten on request (docs/privacy.md): kept as a count of Apple's notifications,
            // without whom it was about, and nothing else: no state, no campaign, no refund answer.
            if stored.forgotten {
                forgotten.append(uuid)
                continue
            }
            let notification = try await verifier.verifyStoredNotification(stored.signedPayload)
            try await refunds?.observe(notification, uuid: uuid, connection: connection, logger: logger)
            try await rescindConsent(notification, uuid: uuid, connection: connection, logger: logger)
            try await matchMassExtensionSummary(notification, uuid: uuid, connection: connection, logger: logger)
            if let snapshot = SubscriptionSnapshot(notification, notificationUUID: uuid) { snapshots.append(snapshot) }
        }
        if !forgotten.isEmpty {
            try await SubscriberErasure.redactNotifications(forgotten, connection: connection, logger: logger)
            Counter(label: "reclaim_forgotten_inputs_total", dimensions: [("input", "notification")]).increment(by: forgotten.count)
        }
        // The whole batch at once (set-based: two statements for all its subscribers, see CampaignEngine).
        let stateOnly = try await MassExtensionStore.fromMassExtensions(
            snapshots.compactMap { snapshot in
                guard snapshot.notificationType == NotificationType.renewalExtended.rawValue, let product = snapshot.transaction?.productId else {
                    return nil
                }
                let subscriber = snapshot.subscriber
                return (snapshot.notificationUUID, subscriber.bundleId, subscriber.environment, product, snapshot.signedDate)
            },
            connection: connection,
            logger: logger
        )
        if !stateOnly.isEmpty {
            Counter(label: "reclaim_mass_extension_notifications_total").increment(by: stateOnly.count)
        }
        try await engine.process(batch: snapshots, stateOnly: stateOnly, connection: connection, logger: logger)
    }
}
