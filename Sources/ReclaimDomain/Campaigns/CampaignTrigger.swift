/// The notification that makes a subscriber eligible for a campaign: `TYPE` (any subtype) or `TYPE/SUBTYPE`.
public struct CampaignTrigger: Sendable, Hashable, CustomStringConvertible {
    public var type: String
    public var subtype: String?

    public init(type: String, subtype: String? = nil) {
        self.type = type
        self.subtype = subtype
    }

    /// Not a notification: Apple's Retention Messaging realtime request from the cancellation sheet. A campaign with
    /// this trigger answers that request (``CancelSheetEvaluator``) instead of issuing an offer for the app.
    public static let retentionMessaging = CampaignTrigger(type: "RETENTION_MESSAGING")

    /// Whether this is ``retentionMessaging``: a cancel-sheet campaign.
    public var isCancelSheet: Bool { self == Self.retentionMessaging }

    /// Parses `TYPE` or `TYPE/SUBTYPE`, checking both against Apple's documented values, so a typo in the
    /// config is refused at start-up instead of never firing; or `RETENTION_MESSAGING` (no subtype).
    public init(parsing text: String) throws(CampaignTriggerError) {
        if text == Self.retentionMessaging.type {
            self = Self.retentionMessaging
            return
        }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard (1...2).contains(parts.count), !parts.contains(where: \.isEmpty) else {
            throw CampaignTriggerError(description: "'\(text)' is not TYPE or TYPE/SUBTYPE, e.g. DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED")
        }
        guard NotificationType.documented.contains(parts[0]) else {
            throw CampaignTriggerError(
                description:
                    "'\(parts[0])' is not a notification type Apple sends (e.g. EXPIRED, DID_FAIL_TO_RENEW), nor RETENTION_MESSAGING (the cancel sheet)"
            )
        }
        if parts.count == 2, !NotificationSubtype.documented.contains(parts[1]) {
            throw CampaignTriggerError(description: "'\(parts[1])' is not a notification subtype Apple sends (e.g. VOLUNTARY, AUTO_RENEW_DISABLED)")
        }
        self.init(type: parts[0], subtype: parts.count == 2 ? parts[1] : nil)
    }

    public func matches(type: String, subtype: String?) -> Bool {
        self.type == type && (self.subtype == nil || self.subtype == subtype)
    }

    public var description: String { subtype.map { "\(type)/\($0)" } ?? type }
}
