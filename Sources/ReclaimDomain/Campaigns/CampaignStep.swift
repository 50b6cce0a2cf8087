import Foundation

/// Everything one notification does to one subscriber, as a pure function: the new state, the redemption or
/// withdrawal of the live offer, and the campaigns' decisions. The worker (`CampaignEngine`) persists the
/// result in the job's transaction; `reclaim campaigns simulate` keeps it in memory. Both run this.
public struct CampaignStep: Sendable, Equatable {
    /// The state after the notification (unchanged when the notification was older than the state).
    public var state: SubscriptionState
    public var stateChanged: Bool
    public var lifecycle: OfferLifecycle.Outcome
    public var decisions: [CampaignDecision]
    /// Delayed campaigns the notification triggered, to fire later (``CampaignEvaluator/fire(_:state:history:triggeredAt:now:)``).
    public var scheduled: [CampaignEvaluator.Scheduled] = []

    public static func run(
        _ snapshot: SubscriptionSnapshot,
        state before: SubscriptionState,
        history: OfferHistory,
        campaigns: [NotificationCampaign],
        now: Date,
        alreadyApplied: Bool = false
    ) -> CampaignStep {
        var state = before
        // An import decided after it was stored (`reclaim backfill --evaluate`): the state holds it, and what came since;
        // it is decided as a fresh event (`now`), the state left as it is.
        let changed = alreadyApplied || state.apply(snapshot)
        let event = SubscriptionEvent(snapshot)
        var history = history
        let lifecycle = OfferLifecycle.apply(event: event, liveOffer: history.liveOffer)
        if lifecycle.redemption?.offerId != nil || lifecycle.withdrawal != nil { history.liveOffer = nil }
        // This notification's own discount counts against the budget of the decisions it makes.
        if let redemption = lifecycle.redemption {
            history.discounts.append(.init(at: redemption.redeemedAt, offer: "\(redemption.offerType)/\(redemption.offerIdentifier)"))
        }
        // A commitment that runs on without renewing: those campaigns wait for its end (a stale event defers nothing).
        let (notCommitted, commitmentDeferred) =
            changed ? CampaignEvaluator.commitmentDeferrals(campaigns: campaigns, state: state, event: event, now: now) : (campaigns, [])
        // A campaign bounded by conditions.expiresWithin waits for the period's end to come near (a stale event defers nothing).
        let (decidedNow, expiryDeferred) =
            changed ? CampaignEvaluator.expiryDeferrals(campaigns: notCommitted, state: state, event: event, now: now) : (notCommitted, [])
        let deferred = commitmentDeferred + expiryDeferred
        let decisions = CampaignEvaluator.evaluate(campaigns: decidedNow, state: state, event: event, history: history, now: now)
        // Scheduled against the state before this notification: a late notification triggers nothing.
        let scheduled = CampaignEvaluator.schedule(campaigns: campaigns, state: before, event: event) + deferred
        return CampaignStep(
            state: state,
            stateChanged: changed && !alreadyApplied,
            lifecycle: lifecycle,
            decisions: decisions,
            scheduled: scheduled
        )
    }
}
