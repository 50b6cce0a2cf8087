/// One subscriber of one app in one environment: how subscriptions, decisions, offers and redemptions are keyed
/// (Apple's originalTransactionId is unique within an app's environment, not across them).
public struct SubscriberKey: Sendable, Hashable {
    public var bundleId: String
    public var environment: String
    public var originalTransactionId: String

    public init(bundleId: String, environment: String, originalTransactionId: String) {
        self.bundleId = bundleId
        self.environment = environment
        self.originalTransactionId = originalTransactionId
    }
}

extension SubscriptionState {
    /// Whose state this is.
    public var subscriber: SubscriberKey {
        SubscriberKey(bundleId: bundleId, environment: environment, originalTransactionId: originalTransactionId)
    }
}

extension SubscriptionSnapshot {
    /// Whose subscription the snapshot is about.
    public var subscriber: SubscriberKey {
        SubscriberKey(bundleId: bundleId, environment: environment, originalTransactionId: originalTransactionId)
    }
}
