import Foundation
import Logging
import PostgresNIO
import ReclaimDomain
import ReclaimStore

/// Turns verified notifications into subscription state, redemptions, withdrawals, decisions and signed offers,
/// all on the job's connection: they commit with the jobs' completion or not at all, so a crash never leaves an
/// offer without its job done, nor a done job whose offer is missing.
///
/// Set-based: a batch of notifications costs two round trips in the common case, whatever its size. One reads
/// and locks every subscriber of the batch with its offer history (``SubscriberStore/lockWithHistory(_:accounts:connection:logger:)``),
/// one writes every state, decision and offer (``SubscriberStore/persist(_:connection:logger:)``); withdrawals add
/// one for the batch, redemptions and delayed campaigns (rare) their own. A subscriber with several notifications
/// in the batch has them applied in `signedDate` order, one per round (a round is those two round trips for the
/// subscribers that still have one), so each sees the state and the live offer the previous one left, as it
/// would one job at a time.
public struct CampaignEngine: Sendable {
    public let campaigns: [NotificationCampaign]
    public let issuer: OfferIssuer
    let now: @Sendable () -> Date
    let metrics = CampaignMetrics()
    /// `apps[].setAppAccountToken` by bundle id: a notification whose purchase carries no token, of a subscription an
    /// earlier transaction gave one, queues a Set App Account Token call (``AppAccountTokenRepair``).
    public var accountTokens: [String: AppAccountTokenRepair.Mode] = [:]

    public init(campaigns: [NotificationCampaign], issuer: OfferIssuer, now: @escaping @Sendable () -> Date = Date.init) {
        self.campaigns = campaigns
        self.issuer = issuer
        self.now = now
    }

    /// The decisions this notification made (for logs and tests).
    @discardableResult
    public func process(_ snapshot: SubscriptionSnapshot, connection: PostgresConnection, logger: Logger) async throws -> [CampaignDecision] {
        try await process(batch: [snapshot], connection: connection, logger: logger)[0]
    }

    /// Processes a batch's notifications; returns each one's decisions, in the batch's order. Those in `stateOnly`
    /// (by notification UUID) update state and the live offer but no campaign sees them; those in `applied` are
    /// decided on the stored state as it is, which holds them already (an import decided later: ``Backfill``).
    @discardableResult
    public func process(
        batch snapshots: [SubscriptionSnapshot],
        stateOnly: Set<UUID> = [],
        applied: Set<UUID> = [],
        connection: PostgresConnection,
        logger: Logger
    ) async throws
        -> [[CampaignDecision]]
    {
        // Each subscriber's notifications by signedDate (ties: batch order); round k takes every subscriber's k-th.
        var bySubscriber: [SubscriberKey: [Int]] = [:]
        for (index, snapshot) in snapshots.enumerated() { bySubscriber[snapshot.subscriber, default: []].append(index) }
        let queues = bySubscriber.values.map { indices in
            indices.sorted { (snapshots[$0].signedDate, $0) < (snapshots[$1].signedDate, $1) }
        }
        var decisions = Array(repeating: [CampaignDecision](), count: snapshots.count)
        var round = 0
        while true {
            let indices = queues.compactMap { round < $0.count ? $0[round] : nil }
            if indices.isEmpty { break }
            let made = try await processRound(
                indices.map { snapshots[$0] },
                stateOnly: stateOnly,
                applied: applied,
                connection: connection,
                logger: logger
            )
            for (index, decided) in zip(indices, made) { decisions[index] = decided }
            round += 1
        }
        return decisions
    }

    /// One notification per subscriber: read them all, decide in memory, write them all.
    private func processRound(
        _ snapshots: [SubscriptionSnapshot],
        stateOnly: Set<UUID>,
        applied: Set<UUID>,
        connection: PostgresConnection,
        logger: Logger
    ) async throws
        -> [[CampaignDecision]]
    {
        var accounts: [SubscriberKey: String] = [:]
        for snapshot in snapshots { accounts[snapshot.subscriber] = snapshot.appTransactionId }
        var loaded = try await SubscriberStore.lockWithHistory(
            snapshots.map(\.subscriber),
            accounts: accounts,
            connection: connection,
            logger: logger
        )
        let campaigns = try await running(connection: connection, logger: logger)
        try await addCodeContexts(to: &loaded, of: snapshots.map(\.subscriber), campaigns: campaigns, connection: connection, logger: logger)
        var writes: [SubscriberStore.Write] = []
        var withdrawals: [(offerId: UUID, reason: String)] = []
        var fires: [NewJob] = []
        var decisions: [[SubscriberStore.DecisionRecord]] = []
        var claims: [OfferCodeStore.Claim] = []
        var tokenUpdates: [AppAccountTokenUpdate] = []
        for (snapshot, (state, history)) in zip(snapshots, loaded) {
            let subscriber = snapshot.subscriber
            let seen = stateOnly.contains(snapshot.notificationUUID) ? [] : campaigns
            let step = CampaignStep.run(
                snapshot,
                state: state,
                history: history,
                campaigns: seen,
                now: now(),
                alreadyApplied: applied.contains(snapshot.notificationUUID)
            )
            let event = SubscriptionEvent(snapshot)
            if let mode = accountTokens[subscriber.bundleId], state.consentRescindedAt == nil,
                let update = AppAccountTokenRepair.update(
                    known: state.appAccountToken,
                    transaction: snapshot.transaction,
                    source: .earlierTransaction,
                    mode: mode
                )
            {
                tokenUpdates.append(
                    AppAccountTokenUpdate(subscriber: subscriber, token: update.token, replaces: update.replaces, source: .earlierTransaction)
                )
            }
            if let redemption = step.lifecycle.redemption {
                // Rare: a statement of its own (it reads the offer it redeems).
                try await OfferStore.recordRedemption(
                    redemption,
                    subscriber: subscriber,
                    notificationUUID: event.notificationUUID,
                    connection: connection,
                    logger: logger
                )
                metrics.redeemed(campaign: redemption.offerId == nil ? nil : history.liveOffer?.campaignId)
            }
            if let withdrawal = step.lifecycle.withdrawal { withdrawals.append((withdrawal.offerId, withdrawal.reason)) }
            let records = try step.decisions.map { try record($0, of: step.state, withdrawals: &withdrawals, claims: &claims, logger: logger) }
            // Delayed campaigns: a job per campaign, due when it fires, in this transaction (a crash loses none).
            for scheduled in step.scheduled {
                let fire = CampaignFire(
                    campaignId: scheduled.campaign.id,
                    subscriber: subscriber,
                    triggeredAt: event.signedDate,
                    notificationUUID: event.notificationUUID,
                    commitmentEndsAt: scheduled.commitmentEndsAt,
                    periodEndsAt: scheduled.periodEndsAt
                )
                fires.append(NewJob(kind: CampaignFire.jobKind, payload: try fire.payload(), runAt: max(scheduled.fireAt, now())))
                logger.debug("campaign scheduled", metadata: ["campaign": "\(scheduled.campaign.id)", "fireAt": "\(scheduled.fireAt)"])
            }
            writes.append(
                .init(
                    state: step.state,
                    stateChanged: step.stateChanged,
                    decisions: records,
                    notificationUUID: event.notificationUUID,
                    triggeredAt: event.signedDate
                )
            )
            decisions.append(records)
        }
        // Withdrawn before the new offers go in: the database allows one live offer per subscriber.
        try await issuer.withdraw(withdrawals, connection: connection, logger: logger)
        for fire in fires { try await JobQueue.enqueue(fire, connection: connection, logger: logger) }
        try await SubscriberStore.persist(writes, connection: connection, logger: logger)
        try await AppAccountTokenStore.enqueue(tokenUpdates, connection: connection, logger: logger)
        let unserved = try await issueCodes(claims, connection: connection, logger: logger)
        return decisions.map { made in made.map { unserved.contains($0.id) ? Self.unserved($0.decision) : $0.decision } }
    }

    /// The offer codes each subscriber of the round can be given, when a running campaign hands out codes.
    private func addCodeContexts(
        to loaded: inout [(SubscriptionState, OfferHistory)],
        of subscribers: [SubscriberKey],
        campaigns: [NotificationCampaign],
        connection: PostgresConnection,
        logger: Logger
    ) async throws {
        var validity: [String: (bundleId: String, offer: String, validFor: TimeInterval)] = [:]
        for campaign in campaigns {
            for offer in campaign.variants.compactMap(\.offerCodes) {
                let key = "\(campaign.bundleId)\u{0}\(offer)"
                validity[key] = (campaign.bundleId, offer, max(validity[key]?.validFor ?? 0, campaign.deliverableFor))
            }
        }
        guard !validity.isEmpty else { return }
        let contexts = try await OfferCodeStore.contexts(
            of: subscribers,
            offers: Array(validity.values),
            connection: connection,
            logger: logger
        )
        for index in loaded.indices { loaded[index].1.codes = contexts[subscribers[index]] ?? OfferCodes.Context() }
    }

    /// Issues the codes of the round's offered decisions (after their decisions are written: each code names its
    /// decision); returns the decisions that found none, turned to skipped in the database.
    private func issueCodes(_ claims: [OfferCodeStore.Claim], connection: PostgresConnection, logger: Logger) async throws -> Set<UUID> {
        guard !claims.isEmpty else { return [] }
        let unserved = try await OfferCodeStore.issue(claims, connection: connection, logger: logger)
        for claim in unserved {
            logger.notice("an offer code pool ran dry while deciding; the decision is skipped", metadata: ["offer": "\(claim.offer)"])
        }
        return Set(unserved.map(\.decisionId))
    }

    /// An offered decision whose code could not be issued, as ``OfferCodeStore/issue(_:connection:logger:)`` rewrote it.
    private static func unserved(_ decision: CampaignDecision) -> CampaignDecision {
        var skipped = decision
        skipped.outcome = .skipped
        skipped.variant = nil
        skipped.reason =
            "no code left: the pool of \(decision.variant?.offerCodes ?? "") ran dry, or the subscriber was given a code of it, while deciding"
        return skipped
    }

    /// A delayed campaign firing (a ``CampaignFire`` job): decided on the subscriber's state now, and its offer
    /// issued, in the job's transaction. The decision is keyed by the triggering notification, like the campaign's
    /// decision would have been at once: a second fire of the same trigger writes nothing.
    @discardableResult
    public func fire(_ fire: CampaignFire, connection: PostgresConnection, logger: Logger) async throws -> CampaignDecision? {
        guard let campaign = try await running(connection: connection, logger: logger).first(where: { $0.id == fire.campaignId }) else {
            logger.notice(
                "a delayed campaign fired after it left the config or was paused; nothing to do",
                metadata: ["campaign": "\(fire.campaignId)"]
            )
            return nil
        }
        let (state, found) = try await SubscriberStore.lockWithHistory(fire.subscriber, connection: connection, logger: logger)
        var loaded = [(state, found)]
        try await addCodeContexts(to: &loaded, of: [fire.subscriber], campaigns: [campaign], connection: connection, logger: logger)
        let history = loaded[0].1
        let decision = CampaignEvaluator.fire(
            campaign,
            state: state,
            history: history,
            triggeredAt: fire.triggeredAt,
            commitmentEndsAt: fire.commitmentEndsAt,
            periodEndsAt: fire.periodEndsAt,
            now: now()
        )
        var withdrawals: [(offerId: UUID, reason: String)] = []
        var claims: [OfferCodeStore.Claim] = []
        let record = try record(decision, of: state, withdrawals: &withdrawals, claims: &claims, logger: logger)
        try await issuer.withdraw(withdrawals, connection: connection, logger: logger)
        try await SubscriberStore.persist(
            [.init(state: state, stateChanged: false, decisions: [record], notificationUUID: fire.notificationUUID, triggeredAt: fire.triggeredAt)],
            connection: connection,
            logger: logger
        )
        return try await issueCodes(claims, connection: connection, logger: logger).isEmpty ? decision : Self.unserved(decision)
    }

    /// The campaigns not switched off (`reclaim campaigns pause`), read with every batch so a switch takes effect at once.
    private func running(connection: PostgresConnection, logger: Logger) async throws -> [NotificationCampaign] {
        let paused = try await CampaignStore.paused(connection: connection, logger: logger)
        return paused.isEmpty ? campaigns : campaigns.filter { !paused.contains($0.id) }
    }

    /// A decision as it is stored: with its offer, signed, when it offered (the live offer it supersedes added to
    /// `withdrawals`, which the caller withdraws first: the database allows one live offer per subscriber), or, for an
    /// offer code, its claim added to `claims`.
    private func record(
        _ decision: CampaignDecision,
        of state: SubscriptionState,
        withdrawals: inout [(offerId: UUID, reason: String)],
        claims: inout [OfferCodeStore.Claim],
        logger: Logger
    ) throws -> SubscriberStore.DecisionRecord {
        metrics.decided(decision)
        logger.debug(
            "campaign decision",
            metadata: ["campaign": "\(decision.campaign.id)", "outcome": "\(decision.outcome.rawValue)", "reason": "\(decision.reason)"]
        )
        let id = UUID()
        guard decision.outcome == .offered else { return .init(id: id, decision: decision, offer: nil) }
        if let superseded = decision.supersedes { withdrawals.append((superseded, "superseded by campaign \(decision.campaign.id)")) }
        let campaign = decision.campaign
        // The variant's offer (a campaign without variants has one, with the empty id).
        let variant = decision.variant ?? campaign.variants.first
        // An offer code: taken from its pool once the decision is written (``issueCodes(_:connection:logger:)``).
        if let offer = variant?.offerCodes {
            claims.append(.init(decisionId: id, subscriber: state.subscriber, offer: offer, validThrough: decision.deliverableUntil))
            return .init(id: id, decision: decision, offer: nil)
        }
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
