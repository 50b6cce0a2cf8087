import Foundation

/// A campaign fired by Apple's notifications: which notification triggers it, when it decides, and how long the
/// offer it issues stays deliverable to the app. Built from the config by the service layer; evaluated by
/// ``CampaignEvaluator``.
public struct NotificationCampaign: CampaignKind, Equatable {
    public var basics: CampaignBasics
    /// The notification that makes a subscriber eligible.
    public var trigger: CampaignTrigger
    /// How long after the triggering notification the offer is handed out.
    public var deliverableFor: TimeInterval
    /// How long after its trigger the campaign fires (0: at once). A delayed campaign is re-checked when it fires,
    /// against the subscriber's state then (``CampaignEvaluator/fire(_:state:history:triggeredAt:commitmentEndsAt:periodEndsAt:now:)``).
    public var delay: TimeInterval
    /// How long after its trigger a delayed campaign may still fire (a backlog, workers down); past it, it is skipped.
    public var window: TimeInterval
    /// A trigger that arrives while a 12-month commitment runs and will not renew is decided this long before the
    /// commitment ends, not at once: the customer keeps paying until then (``CampaignEvaluator/commitmentDeferrals``).
    public var commitmentLead: TimeInterval

    public init(
        _ basics: CampaignBasics,
        trigger: CampaignTrigger,
        deliverableFor: TimeInterval = 7 * 86_400,
        delay: TimeInterval = 0,
        window: TimeInterval? = nil,
        commitmentLead: TimeInterval = NotificationCampaign.defaultCommitmentLead
    ) {
        self.basics = basics
        self.trigger = trigger
        self.deliverableFor = deliverableFor
        self.delay = delay
        self.window = window ?? delay + 86_400
        self.commitmentLead = commitmentLead
    }

    public var triggerName: String { trigger.description }

    /// Whether `type`/`subtype` triggers it in `bundleId`, at once (not delayed).
    func decidesAtOnce(_ event: SubscriptionEvent, in bundleId: String) -> Bool {
        delay <= 0 && basics.bundleId == bundleId && trigger.matches(type: event.type, subtype: event.subtype)
    }

    /// `commitmentLead`'s default: two weeks before the commitment ends.
    public static let defaultCommitmentLead: TimeInterval = 14 * 86_400
}
