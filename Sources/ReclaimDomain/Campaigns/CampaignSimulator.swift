import Foundation

/// Replays notifications through the subscription state and the campaign rules in memory, as the workers
/// would, and keeps per subscriber what happened: `reclaim campaigns simulate` without a database.
public struct CampaignSimulator: Sendable {
    /// A subscriber: app, environment and originalTransactionId.
    public struct Key: Sendable, Hashable, Comparable {
        public var bundleId: String
        public var environment: String
        public var originalTransactionId: String

        public static func < (lhs: Key, rhs: Key) -> Bool {
            (lhs.bundleId, lhs.environment, lhs.originalTransactionId) < (rhs.bundleId, rhs.environment, rhs.originalTransactionId)
        }
    }

    /// One line of a subscriber's story.
    public struct Entry: Sendable, Equatable {
        public var signedDate: Date
        public var notification: String
        public var lines: [String]
    }

    public let campaigns: [NotificationCampaign]
    public private(set) var states: [Key: SubscriptionState] = [:]
    public private(set) var histories: [Key: OfferHistory] = [:]
    public private(set) var stories: [Key: [Entry]] = [:]

    /// The offers campaigns hand out codes of: taken as always in stock (the simulation has no pools).
    let codeOffers: Set<String>

    public init(campaigns: [NotificationCampaign]) {
        self.campaigns = campaigns
        codeOffers = Set(campaigns.flatMap { $0.variants.compactMap(\.offerCodes) })
    }

    /// Runs one notification; `now` is the processing time (the trigger's own time replays history as it happened).
    public mutating func process(_ snapshot: SubscriptionSnapshot, now: Date) {
        let key = Key(bundleId: snapshot.bundleId, environment: snapshot.environment, originalTransactionId: snapshot.originalTransactionId)
        let before =
            states[key] ?? SubscriptionState(bundleId: key.bundleId, environment: key.environment, originalTransactionId: key.originalTransactionId)
        var history = histories[key] ?? OfferHistory(codes: codeOffers.isEmpty ? nil : OfferCodes.Context(available: codeOffers))
        let step = CampaignStep.run(snapshot, state: before, history: history, campaigns: campaigns, now: now)
        states[key] = step.state
        var lines: [String] = []
        if !step.stateChanged { lines.append("state unchanged: not newer than the last notification applied") }
        if let redemption = step.lifecycle.redemption {
            lines.append(
                redemption.offerId == nil
                    ? "redeemed \(redemption.offerIdentifier), an offer Reclaim did not issue" : "redeemed \(redemption.offerIdentifier)"
            )
            if redemption.offerId != nil { history.liveOffer = nil }
            // Apple lets each customer redeem one code per offer.
            if redemption.offerType == OfferCodes.offerType { history.codes?.given.insert(redemption.offerIdentifier) }
        }
        if let withdrawal = step.lifecycle.withdrawal {
            lines.append("withdrawn: \(history.liveOffer?.campaignId ?? "offer"): \(withdrawal.reason)")
            history.liveOffer = nil
        }
        for decision in step.decisions {
            lines.append("\(decision.campaign.id): \(decision.outcome.rawValue): \(decision.reason)")
            // The arm is remembered as the workers store it: an experiment's variant, none for a plain campaign.
            let variantId = decision.variant.flatMap { $0.id.isEmpty ? nil : $0.id }
            history.decisions.append(
                .init(campaignId: decision.campaign.id, outcome: decision.outcome, triggeredAt: snapshot.signedDate, variantId: variantId)
            )
            if decision.outcome == .offered, let code = (decision.variant ?? decision.campaign.variants.first)?.offerCodes {
                // A code is sent, not held as the app's live offer (as the workers store it); the subscriber has had one.
                history.codes?.given.insert(code)
            } else if decision.outcome == .offered {
                let offer = decision.variant ?? decision.campaign.variants.first
                history.liveOffer = .init(
                    id: UUID(),
                    campaignId: decision.campaign.id,
                    priority: decision.campaign.priority,
                    productId: offer?.productId ?? decision.campaign.productId,
                    offerIdentifier: offer?.offerIdentifier ?? decision.campaign.offerIdentifier,
                    triggeredAt: snapshot.signedDate
                )
            }
        }
        for scheduled in step.scheduled {
            let why = scheduled.commitmentEndsAt.map {
                " (\(CampaignEvaluatorFormat.duration(scheduled.campaign.commitmentLead)) before the commitment ends \($0.formatted(.iso8601)))"
            }
            lines.append("\(scheduled.campaign.id): scheduled: fires \(scheduled.fireAt.formatted(.iso8601))\(why ?? ""), re-checked then")
        }
        histories[key] = history
        let name = snapshot.subtype.map { "\(snapshot.notificationType)/\($0)" } ?? snapshot.notificationType
        stories[key, default: []].append(Entry(signedDate: snapshot.signedDate, notification: name, lines: lines))
    }
}
