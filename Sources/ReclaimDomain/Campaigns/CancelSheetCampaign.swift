import Foundation

/// A campaign that answers Apple's Retention Messaging realtime request from the cancel sheet (the config's
/// `trigger: RETENTION_MESSAGING`): each arm's ``CampaignVariant/answer`` is what Apple shows. Evaluated by
/// ``CancelSheetEvaluator``; it issues no offer for the app, so nothing stays deliverable.
public struct CancelSheetCampaign: CampaignKind, Equatable {
    public var basics: CampaignBasics
    /// Records what it would have answered, and answers `{}`.
    public var shadow: Bool
    /// How long after a decision its save outcome is settled (auto-renew on or off then).
    public var saveWindow: TimeInterval

    public init(_ basics: CampaignBasics, shadow: Bool = false, saveWindow: TimeInterval = 30 * 86_400) {
        self.basics = basics
        self.shadow = shadow
        self.saveWindow = saveWindow
    }

    public var triggerName: String { CampaignTrigger.retentionMessaging.type }

    /// Answered at once, in Apple's request: no offer waits for the app.
    public var deliverableFor: TimeInterval { 0 }

    public var checkDetails: [String] { shadow ? ["shadow (answers {})"] : [] }
}
