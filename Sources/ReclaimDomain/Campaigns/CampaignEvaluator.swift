import Foundation

/// The campaign rules: a pure function from (campaigns, subscription state, event, offer history, now) to
/// decisions. No I/O, no clock, no randomness (the holdout is a hash), so every rule is tested without a
/// database and `reclaim campaigns simulate` gives the answer the workers would.
public enum CampaignEvaluator {
    /// One decision per campaign the event triggers, highest priority first (then by id).
    ///
    /// Rules, in order; the first that says no skips the campaign with its reason:
    /// 1. the event is not older than the state (a late notification does not trigger anything);
    /// 2. the trigger time lies in the campaign's date window;
    /// 3. the subscriber has or had a subscription in the app (Apple's condition for promotional offers), and no
    ///    parent or guardian withdrew consent for the app (RESCIND_CONSENT);
    /// 4. the campaign's conditions (products, tenure, expiration intent, storefront, billing plan), and an offer for the
    ///    subscription's billing plan;
    /// 5. Apple's own win-back offers, when the campaign stands aside for them;
    /// 6. the offer would still be deliverable now (old notifications from a backlog or a reconciliation);
    /// 7. cooldown and maximum offers per subscriber, and the app's discount budget across every door; for a campaign
    ///    that hands out offer codes, an unused code in every arm's pool and none of its offers given before;
    /// 8. one live offer per subscriber: a live offer of equal or higher priority wins; a lower one is
    ///    superseded (withdrawn when this one is issued);
    /// 9. the holdout: eligible subscribers in the control group are held out.
    /// Once one campaign offered or held out, lower ones are skipped: the subscriber's offer for this event
    /// is decided, and a held-out subscriber must not get another campaign's offer instead.
    public static func evaluate(
        campaigns: [NotificationCampaign],
        state: SubscriptionState,
        event: SubscriptionEvent,
        history: OfferHistory,
        now: Date
    ) -> [CampaignDecision] {
        // Delayed campaigns do not decide now: ``schedule(campaigns:state:event:)`` names them, and they decide
        // when they fire.
        let triggered =
            campaigns
            .filter { $0.decidesAtOnce(event, in: state.bundleId) }
            .sorted { ($0.priority, $1.id) > ($1.priority, $0.id) }
        var decisions: [CampaignDecision] = []
        var taken: CampaignDecision?
        for campaign in triggered {
            let deliverableUntil = event.signedDate.addingTimeInterval(campaign.deliverableFor)
            func decide(_ outcome: CampaignDecision.Outcome, _ reason: String, supersedes: UUID? = nil) -> CampaignDecision {
                CampaignDecision(campaign: campaign, outcome: outcome, reason: reason, supersedes: supersedes, deliverableUntil: deliverableUntil)
            }
            if let taken {
                let verb = taken.outcome == .offered ? "offered" : "held out of"
                decisions.append(
                    decide(
                        .skipped,
                        "superseded: this notification already \(verb) campaign \(taken.campaign.id) (priority \(taken.campaign.priority))"
                    )
                )
                continue
            }
            let decision =
                skipReason(campaign, state: state, event: event, history: history, now: now, deliverableUntil: deliverableUntil)
                .map { decide(.skipped, $0) }
                ?? offerOrHoldOut(campaign, state: state, history: history, decide: decide)
            if decision.outcome != .skipped { taken = decision }
            decisions.append(decision)
        }
        return decisions
    }

    /// A delayed campaign this event triggers, and when it fires.
    public struct Scheduled: Sendable, Equatable {
        public var campaign: NotificationCampaign
        public var fireAt: Date
        /// Deferred to `commitmentLead` before this commitment end (``commitmentDeferrals(campaigns:state:event:now:)``),
        /// not delayed by the campaign's own `delay`: re-checked against the commitment when it fires.
        public var commitmentEndsAt: Date?
        /// Deferred to `conditions.expiresWithin` before this period end (``expiryDeferrals(campaigns:state:event:now:)``):
        /// re-checked against the period when it fires.
        public var periodEndsAt: Date?

        public init(campaign: NotificationCampaign, fireAt: Date, commitmentEndsAt: Date? = nil, periodEndsAt: Date? = nil) {
            self.campaign = campaign
            self.fireAt = fireAt
            self.commitmentEndsAt = commitmentEndsAt
            self.periodEndsAt = periodEndsAt
        }
    }

    /// The campaigns this event would decide now that wait instead: the trigger arrives while a 12-month commitment
    /// runs and will not renew (its `commitmentAutoRenewStatus` is 0), so the customer keeps paying until the
    /// commitment's end; each is decided `commitmentLead` before that end, or now when the end is nearer than that.
    /// The others, and every campaign of a subscription without such a commitment, are decided now.
    public static func commitmentDeferrals(
        campaigns: [NotificationCampaign],
        state: SubscriptionState,
        event: SubscriptionEvent,
        now: Date
    ) -> (now: [NotificationCampaign], deferred: [Scheduled]) {
        guard let end = state.commitmentEndsWithoutRenewal(after: event.signedDate) else { return (campaigns, []) }
        var decidedNow: [NotificationCampaign] = []
        var deferred: [Scheduled] = []
        for campaign in campaigns {
            let fireAt = end.addingTimeInterval(-campaign.commitmentLead)
            if campaign.decidesAtOnce(event, in: state.bundleId), fireAt > now {
                deferred.append(Scheduled(campaign: campaign, fireAt: fireAt, commitmentEndsAt: end))
            } else {
                decidedNow.append(campaign)
            }
        }
        return (decidedNow, deferred)
    }

    /// The campaigns this event would decide now that wait for `conditions.expiresWithin`: the subscription is active
    /// (or in its grace period) and its period ends further away than that, so each is decided `expiresWithin` before
    /// the end (re-checked then), not skipped. Others are decided now (where the condition is met, or says why not).
    public static func expiryDeferrals(
        campaigns: [NotificationCampaign],
        state: SubscriptionState,
        event: SubscriptionEvent,
        now: Date
    ) -> (now: [NotificationCampaign], deferred: [Scheduled]) {
        guard state.status == .active || state.status == .gracePeriod, let end = state.periodEnd(after: now) else { return (campaigns, []) }
        var decidedNow: [NotificationCampaign] = []
        var deferred: [Scheduled] = []
        for campaign in campaigns {
            if let within = campaign.conditions.expiresWithin, campaign.decidesAtOnce(event, in: state.bundleId),
                end.addingTimeInterval(-Double(within)) > now
            {
                deferred.append(Scheduled(campaign: campaign, fireAt: end.addingTimeInterval(-Double(within)), periodEndsAt: end))
            } else {
                decidedNow.append(campaign)
            }
        }
        return (decidedNow, deferred)
    }

    /// The delayed campaigns `event` triggers, unless the event is older than the state or outside the campaign's
    /// dates: each fires `delay` after the event's signedDate, when ``fire(_:state:history:triggeredAt:now:)``
    /// decides it on the state of that moment.
    public static func schedule(campaigns: [NotificationCampaign], state: SubscriptionState, event: SubscriptionEvent) -> [Scheduled] {
        let at = event.signedDate
        if let last = state.lastSignedDate, last > at { return [] }
        return campaigns.filter { campaign in
            campaign.delay > 0 && campaign.bundleId == state.bundleId && campaign.trigger.matches(type: event.type, subtype: event.subtype)
                && campaign.basics.outsideDates(at) == nil
        }.map { Scheduled(campaign: $0, fireAt: at.addingTimeInterval($0.delay)) }
    }

    /// A delayed campaign firing: decided on the subscriber's state and history now, not at the trigger. A
    /// subscriber who came back in the meantime (the subscription is active again) is skipped; so is a fire past
    /// the campaign's window. Otherwise every rule of ``evaluate(campaigns:state:event:history:now:)`` applies, the
    /// staleness of the trigger excepted (later notifications are what the re-check reads), and the offer is
    /// deliverable for `deliverableFor` from now.
    ///
    /// A fire deferred to a commitment's end (`commitmentEndsAt`) is re-checked against the commitment instead: it
    /// is skipped when the commitment renews again or has already ended (win-back campaigns take the lapse).
    public static func fire(
        _ campaign: NotificationCampaign,
        state: SubscriptionState,
        history: OfferHistory,
        triggeredAt: Date,
        commitmentEndsAt: Date? = nil,
        periodEndsAt: Date? = nil,
        now: Date
    ) -> CampaignDecision {
        let deliverableUntil = now.addingTimeInterval(campaign.deliverableFor)
        func decide(_ outcome: CampaignDecision.Outcome, _ reason: String, supersedes: UUID? = nil) -> CampaignDecision {
            CampaignDecision(campaign: campaign, outcome: outcome, reason: reason, supersedes: supersedes, deliverableUntil: deliverableUntil)
        }
        if let end = commitmentEndsAt {
            if state.commitmentAutoRenew == true {
                return decide(.skipped, "commitment renews: auto-renew of the commitment is on again")
            }
            let ends = state.commitmentExpiresAt ?? end
            if ends <= now { return decide(.skipped, "commitment ended \(iso(ends)) before the campaign fired") }
        } else if periodEndsAt != nil {
            // Deferred to expiresWithin before the period's end: the conditions below say whether it still holds (the
            // subscription active, its end near); a lapse since is the win-back campaigns' to take.
            if state.status != .active && state.status != .gracePeriod {
                return decide(.skipped, "lapsed: the subscription is \(state.status.rawValue) before the campaign fired")
            }
        } else {
            if now > triggeredAt.addingTimeInterval(campaign.window) {
                return decide(.skipped, "window passed: triggered \(iso(triggeredAt)), window \(duration(campaign.window))")
            }
            if state.status == .active {
                return decide(.skipped, "came back: the subscription is active again \(duration(campaign.delay)) after the trigger")
            }
        }
        // The trigger's own staleness is not a rule here: the state has moved on by design.
        var current = state
        current.lastSignedDate = nil
        let event = SubscriptionEvent(notificationUUID: UUID(), type: "", signedDate: triggeredAt)
        if let reason = skipReason(campaign, state: current, event: event, history: history, now: now, deliverableUntil: deliverableUntil) {
            return decide(.skipped, reason)
        }
        return offerOrHoldOut(campaign, state: state, history: history, decide: decide)
    }

    /// Rules 1–7: nil when none says no.
    private static func skipReason(
        _ campaign: NotificationCampaign,
        state: SubscriptionState,
        event: SubscriptionEvent,
        history: OfferHistory,
        now: Date,
        deliverableUntil: Date
    ) -> String? {
        let at = event.signedDate
        if let last = state.lastSignedDate, last > at {
            return "stale: a newer notification (\(state.lastNotificationType ?? "?") signed \(iso(last))) was already applied"
        }
        if let outside = campaign.basics.outsideDates(at) { return outside }
        if !state.hasOrHadSubscription { return "no subscription: Apple offers promotional offers only to subscribers who have or had one" }
        if let rescinded = state.consentRescindedAt {
            return "consent rescinded: a parent or guardian withdrew consent for the app \(iso(rescinded)) (RESCIND_CONSENT)"
        }
        if let unqualified = campaign.basics.unqualified(state, at: at, now: now) { return unqualified }
        if deliverableUntil <= now { return "too late: the offer would have been deliverable until \(iso(deliverableUntil))" }
        let earlier = history.decisions.filter { $0.campaignId == campaign.id && $0.outcome != .skipped }
        if let last = earlier.map(\.triggeredAt).max(), at < last.addingTimeInterval(campaign.cooldown) {
            return "cooldown: last decided \(iso(last)), cooldown \(duration(campaign.cooldown))"
        }
        if let maximum = campaign.maxOffersPerSubscriber {
            let offered = earlier.filter { $0.outcome == .offered }.count
            if offered >= maximum { return "maximum reached: \(offered) of \(maximum) offers of this campaign already issued" }
        }
        if let budget = campaign.discountBudget, let reason = budget.forPlan(state.billingPlanType).exhausted(by: history.discounts, at: at) {
            return reason
        }
        if let reason = OfferCodes.skipReason(campaign, context: history.codes) { return reason }
        if let live = history.liveOffer, live.priority >= campaign.priority {
            return
                "one offer at a time: live offer \(live.id.uuidString.lowercased()) of \(live.campaignId) has priority \(live.priority) ≥ \(campaign.priority)"
        }
        return nil
    }

    /// Rules 8–9 for a campaign no rule skipped.
    private static func offerOrHoldOut(
        _ campaign: NotificationCampaign,
        state: SubscriptionState,
        history: OfferHistory,
        decide: (CampaignDecision.Outcome, String, UUID?) -> CampaignDecision
    ) -> CampaignDecision {
        if let heldOut = campaign.basics.heldOut(state.originalTransactionId) { return decide(.heldOut, heldOut, nil) }
        // The arm: the one an earlier decision gave this subscriber, else drawn by weight.
        let earlier = history.decisions.filter { $0.campaignId == campaign.id && $0.outcome == .offered }.max { $0.triggeredAt < $1.triggeredAt }
        let variant = campaign.basics.arm(for: state.originalTransactionId, earlier: earlier?.variantId, plan: state.billingPlanType)
        let arm = variant.map { $0.id.isEmpty ? "" : " (variant \($0.id))" } ?? ""
        var decision: CampaignDecision
        if let live = history.liveOffer {
            decision = decide(
                .offered,
                "eligible\(arm); supersedes live offer \(live.id.uuidString.lowercased()) of \(live.campaignId) (priority \(live.priority) < \(campaign.priority))",
                live.id
            )
        } else {
            decision = decide(.offered, "eligible\(arm): \(campaign.trigger) and every condition met", nil)
        }
        decision.variant = variant
        return decision
    }

    static func iso(_ date: Date) -> String { CampaignEvaluatorFormat.iso(date) }

    static func duration(_ seconds: TimeInterval) -> String { CampaignEvaluatorFormat.duration(seconds) }
}
