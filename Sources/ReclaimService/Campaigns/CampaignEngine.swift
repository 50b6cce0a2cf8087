import Foundation
import Logging
import PostgresNIO
import ReclaimDomain
import ReclaimStore

/// Turns one verified notification into subscription state, redemptions, withdrawals, decisions and signed
/// offers, all on the job's connection: they commit with the job's completion or not at all, so a crash never
/// leaves an offer without its job done, nor a done job whose offer is missing.
public struct CampaignEngine: Sendable {
    public let campaigns: [Campaign]
    /// By bundle id.
    public let signers: [String: OfferSigner]
    let now: @Sendable () -> Date
    let metrics = CampaignMetrics()

    public init(campaigns: [Campaign], signers: [String: OfferSigner], now: @escaping @Sendable () -> Date = Date.init) {
        self.campaigns = campaigns
        self.signers = signers
        self.now = now
    }

    /// The decisions this notification made (for logs and tests).
    @discardableResult
    public func process(_ snapshot: SubscriptionSnapshot, connection: PostgresConnection, logger: Logger) async throws -> [CampaignDecision] {
        let state = try await SubscriptionStore.lock(
            bundleId: snapshot.bundleId,
            environment: snapshot.environment,
            originalTransactionId: snapshot.originalTransactionId,
            connection: connection,
            logger: logger
        )
        let subscriber = OfferStore.Subscriber(
            bundleId: state.bundleId,
            environment: state.environment,
            originalTransactionId: state.originalTransactionId
        )
        let history = try await OfferStore.history(of: subscriber, connection: connection, logger: logger)
        let step = CampaignStep.run(snapshot, state: state, history: history, campaigns: campaigns, now: now())
        if step.stateChanged { try await SubscriptionStore.save(step.state, connection: connection, logger: logger) }

        let event = SubscriptionEvent(snapshot)
        if let redemption = step.lifecycle.redemption {
            try await OfferStore.recordRedemption(
                redemption,
                subscriber: subscriber,
                notificationUUID: event.notificationUUID,
                connection: connection,
                logger: logger
            )
            metrics.redeemed(campaign: redemption.offerId == nil ? nil : history.liveOffer?.campaignId)
        }
        if let withdrawal = step.lifecycle.withdrawal {
            try await OfferStore.withdraw(withdrawal.offerId, reason: withdrawal.reason, connection: connection, logger: logger)
            metrics.withdrawn()
        }

        let decisions = step.decisions
        for decision in decisions {
            let decisionId = UUID()
            let inserted = try await OfferStore.insertDecision(
                id: decisionId,
                decision,
                subscriber: subscriber,
                appAccountToken: step.state.appAccountToken,
                notificationUUID: event.notificationUUID,
                triggeredAt: event.signedDate,
                connection: connection,
                logger: logger
            )
            guard inserted else { continue }  // decided on an earlier run of this notification: nothing more to do
            metrics.decided(decision)
            logger.debug(
                "campaign decision",
                metadata: ["campaign": "\(decision.campaign.id)", "outcome": "\(decision.outcome.rawValue)", "reason": "\(decision.reason)"]
            )
            guard decision.outcome == .offered else { continue }
            if let superseded = decision.supersedes {
                try await OfferStore.withdraw(
                    superseded,
                    reason: "superseded by campaign \(decision.campaign.id)",
                    connection: connection,
                    logger: logger
                )
                metrics.withdrawn()
            }
            try await issue(decision, decisionId: decisionId, state: step.state, event: event, connection: connection, logger: logger)
        }
        return decisions
    }

    private func issue(
        _ decision: CampaignDecision,
        decisionId: UUID,
        state: SubscriptionState,
        event: SubscriptionEvent,
        connection: PostgresConnection,
        logger: Logger
    ) async throws {
        let campaign = decision.campaign
        guard let signer = signers[campaign.bundleId] else { throw NoSigningKey(bundleId: campaign.bundleId) }
        let signed = try signer.signOffer(
            product: campaign.productId,
            offer: campaign.offerIdentifier,
            appAccountToken: state.appAccountToken,
            transactionId: state.originalTransactionId,
            nonce: UUID(),
            now: now()
        )
        metrics.signed(purpose: "issue")
        try await OfferStore.insert(
            NewOffer(
                decisionId: decisionId,
                bundleId: state.bundleId,
                environment: state.environment,
                originalTransactionId: state.originalTransactionId,
                appAccountToken: state.appAccountToken,
                campaignId: campaign.id,
                sourceNotificationUUID: event.notificationUUID,
                triggeredAt: event.signedDate,
                priority: campaign.priority,
                productId: campaign.productId,
                offerIdentifier: campaign.offerIdentifier,
                signed: signed,
                deliverableUntil: decision.deliverableUntil
            ),
            connection: connection,
            logger: logger
        )
    }
}

/// A campaign for an app without a signing key (the config check refuses this; kept for a config changed
/// under a running process).
struct NoSigningKey: Error, CustomStringConvertible {
    let bundleId: String
    var description: String { "app \(bundleId) has no signing key to sign offers with" }
}
