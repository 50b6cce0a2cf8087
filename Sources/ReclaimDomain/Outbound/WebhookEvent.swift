/// The events Reclaim sends to webhooks, as `type` in each payload. The database's triggers queue them
/// (schema.sql, "Outbound"); this list is what the config may subscribe to.
public enum WebhookEvent: String, CaseIterable, Sendable {
    case offerIssued = "offer.issued"
    case offerDelivered = "offer.delivered"
    case offerRedeemed = "offer.redeemed"
    case offerWithdrawn = "offer.withdrawn"
    case offerExpired = "offer.expired"
    case grantCreated = "grant.created"
    /// Opt-in: a refused notification whose unverified payload names the app (anyone can cause one).
    case notificationRefused = "notification.refused"

    /// What a webhook gets when its config lists no events: all but the opt-in one.
    public static let defaults: [WebhookEvent] = allCases.filter { $0 != .notificationRefused }

    /// The type `reclaim webhooks test` sends; receivers ignore types they do not know.
    public static let testType = "webhook.test"
}
