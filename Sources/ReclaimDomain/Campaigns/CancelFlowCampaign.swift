import Foundation

/// A campaign that answers the app's own cancel flow (`POST /v1/cancel-flow`, the config's `trigger: CANCEL_FLOW`):
/// the subscriber tapped "Cancel subscription" in the app and may have said why. Each arm's
/// ``CampaignVariant/answer`` is what the app shows: a promotional offer Reclaim signs (then the subscriber's one live
/// offer), a message the app words itself, or a switch to another product. Evaluated by ``CancelFlowEvaluator``.
public struct CancelFlowCampaign: CampaignKind, Equatable {
    public var basics: CampaignBasics
    /// The survey answers it takes (`none` for "no answer"); nil for every answer.
    public var reasons: Set<String>?
    /// How long after a decision its save outcome is settled: saved unless auto-renew was turned off or a refund
    /// followed within it.
    public var saveWindow: TimeInterval
    /// How long the offer it issues stays the subscriber's live offer (deliverable by `GET /v1/offers` too).
    public var deliverableFor: TimeInterval

    public init(
        _ basics: CampaignBasics,
        reasons: Set<String>? = nil,
        saveWindow: TimeInterval = 30 * 86_400,
        deliverableFor: TimeInterval = 7 * 86_400
    ) {
        self.basics = basics
        self.reasons = reasons
        self.saveWindow = saveWindow
        self.deliverableFor = deliverableFor
    }

    /// The config's trigger of the kind: not a notification, the app's request.
    public static let trigger = "CANCEL_FLOW"

    /// The reason of a subscriber who gave no answer, as `reasons` names it.
    public static let noAnswer = "none"

    public var triggerName: String { Self.trigger }

    public var checkNotes: [String] {
        (reasons.map { ["reasons \($0.sorted().joined(separator: ", "))"] } ?? []) + ["save window \(CampaignEvaluatorFormat.duration(saveWindow))"]
    }
}

/// What the app can show, and what an arm answers with.
public enum CancelFlowAnswerKind: String, Sendable, CaseIterable, Codable {
    case offer, message, `switch`

    /// The kind of a cancel-flow arm's answer.
    public init(_ answer: CancelSheetAnswer) {
        switch answer {
        case .offer: self = .offer
        case .message: self = .message
        case .switchTo: self = .switch
        }
    }
}
