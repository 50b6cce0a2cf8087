import Foundation
import Logging
import PostgresNIO
import ReclaimDomain
import ReclaimStore

/// Turns one verified notification into subscription state, redemptions, withdrawals, decisions and signed
/// offers, all on the job's connection: they commit with the job's completion or not at all, so a crash never
/// leaves an offer without its job done, nor a done job whose offer is missing.
///
/// Two round trips in the common case: one reads and locks the subscriber with its offer history
/// (``SubscriberStore/lockWithHistory(_:connection:logger:)``), one writes state, decisions and offers
/// (``SubscriberStore/persist(state:stateChanged:decisions:notificationUUID:triggeredAt:connection:logger:)``).
/// Redemptions and withdrawals, which are rare, add their own.
public struct CampaignEngine: Sendable {
    public let campaigns: [Campaign]
    public let issuer: OfferIssuer
    let now: @Sendable () -> Date
    let metrics = CampaignMetrics()

    public init(campaigns: [Campaign], issuer: OfferIssuer, now: @escaping @Sendable () -> Date = Date.init) {
        self.campaigns = campaigns
        self.issuer = issuer
        self.now = now
    }

    /// The decisions this notification made (for logs and tests).
    @discardableResult
    public func process(_ snapshot: SubscriptionSnapshot, connection: PostgresConnection, logger: Logger) async throws -> [CampaignDecision] {
        let subscriber = snapshot.subscriber
        let (state, history) = try await SubscriberStore.lockWithHistory(subscriber, connection: connection, logger: logger)
        let step = CampaignStep.run(snapshot, state: state, history: history, campaigns: campaigns, now: now())
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
            try await issuer.withdraw(withdrawal.offerId, reason: withdrawal.reason, connection: connection, logger: logger)
        }

        var records: [SubscriberStore.DecisionRecord] = []
        for decision in step.decisions {
            records.append(try await record(decision, of: step.state, connection: connection, logger: logger))
        }
        // Delayed campaigns: a job per campaign, due when it fires, in this transaction (a crash loses none).
        for scheduled in step.scheduled {
            let fire = CampaignFire(
                campaignId: scheduled.campaign.id,
                subscriber: subscriber,
                triggeredAt: event.signedDate,
                notificationUUID: event.notificationUUID
            )
            try await JobQueue.enqueue(
                NewJob(kind: CampaignFire.jobKind, payload: try fire.payload(), runAt: max(scheduled.fireAt, now())),
                connection: connection,
                logger: logger
            )
            logger.debug("campaign scheduled", metadata: ["campaign": "\(scheduled.campaign.id)", "fireAt": "\(scheduled.fireAt)"])
        }
        try await SubscriberStore.persist(
            state: step.state,
            stateChanged: step.stateChanged,
            decisions: records,
            notificationUUID: event.notificationUUID,
            triggeredAt: event.signedDate,
            connection: connection,
            logger: logger
        )
        return step.decisions
    }

    /// A delayed campaign firing (a ``CampaignFire`` job): decided on the subscriber's state now, and its offer
    /// issued, in the job's transaction. The decision is keyed by the triggering notification, like the campaign's
    /// decision would have been at once: a second fire of the same trigger writes nothing.
    @discardableResult
    public func fire(_ fire: CampaignFire, connection: PostgresConnection, logger: Logger) async throws -> CampaignDecision? {
        guard let campaign = campaigns.first(where: { $0.id == fire.campaignId }) else {
            logger.notice("a delayed campaign fired after it left the config; nothing to do", metadata: ["campaign": "\(fire.campaignId)"])
            return nil
        }
        let (state, history) = try await SubscriberStore.lockWithHistory(fire.subscriber, connection: connection, logger: logger)
        let decision = CampaignEvaluator.fire(campaign, state: state, history: history, triggeredAt: fire.triggeredAt, now: now())
        let record = try await record(decision, of: state, connection: connection, logger: logger)
        try await SubscriberStore.persist(
            state: state,
            stateChanged: false,
            decisions: [record],
            notificationUUID: fire.notificationUUID,
            triggeredAt: fire.triggeredAt,
            connection: connection,
            logger: logger
        )
        return decision
    }

    /// A decision as it is stored: with its offer, signed, when it offered (the live offer it supersedes withdrawn
    /// first: the database allows one live offer per subscriber).
    private func record(
        _ decision: CampaignDecision,
        of state: SubscriptionState,
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> SubscriberStore.DecisionRecord {
        metrics.decided(decision)
        logger.debug(
            "campaign decision",
            metadata: ["campaign": "\(decision.campaign.id)", "outcome": "\(decision.outcome.rawValue)", "reason": "\(decision.reason)"]
        )
        let id = UUID()
        guard decision.outcome == .offered else { return .init(id: id, decision: decision, offer: nil) }
        if let superseded = decision.supersedes {
            try await issuer.withdraw(superseded, reason: "superseded by campaign \(decision.campaign.id)", connection: connection, logger: logger)
        }
        let campaign = decision.campaign
        // The variant's offer (a campaign without variants has one, with the empty id).
        let variant = decision.variant ?? campaign.variants.first
        let offer = try issuer.issue(
            .init(
                subscriber: state,
                campaignId: campaign.id,
                productId: variant?.productId ?? campaign.productId,
                offerIdentifier: variant?.offerIdentifier ?? campaign.offerIdentifier,
                priority: campaign.priority,
                deliverableUntil: decision.deliverableUntil,
                decisionId: id,
                variantId: variant.flatMap { $0.id.isEmpty ? nil : $0.id }
            ),
            purpose: "issue"
        )
        return .init(id: id, decision: decision, offer: offer)
    }
}
