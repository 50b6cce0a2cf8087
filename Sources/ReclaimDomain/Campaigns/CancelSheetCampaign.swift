import Foundation

/// A campaign that answers Apple's Retention Messaging realtime request from the cancel sheet (the config's
/// `trigger: RETENTION_MESSAGING`): each arm's ``CampaignVariant/answer`` is what Apple shows. Evaluated by
/// ``CancelSheetEvaluator``.
public struct CancelSheetCampaign: CampaignKind, Equatable {
    public var basics: CampaignBasics
    /// Records what it would have answered, and answers `{}`.
    public var shadow: Bool
    /// How long after a decision its save outcome is settled (auto-renew on or off then).
    public var saveWindow: TimeInterval
    /// The config's `deliverableFor`, which the sheet does not use (its answers leave in Apple's request): kept only
    /// because `reclaim.campaigns.deliverable_for` and `campaigns check` have always shown it.
    public var deliverableFor: TimeInterval

    public init(_ basics: CampaignBasics, shadow: Bool = false, saveWindow: TimeInterval = 30 * 86_400, deliverableFor: TimeInterval = 7 * 86_400) {
        self.basics = basics
        self.shadow = shadow
        self.saveWindow = saveWindow
        self.deliverableFor = deliverableFor
    }

    public var triggerName: String { CampaignTrigger.retentionMessaging.type }

    public var checkNotes: [String] { shadow ? ["shadow (answers {})"] : [] }
}
