import Foundation
import Logging
import PostgresNIO
import ReclaimDomain

/// A batch's two round trips to the database for all its subscribers: read (and lock) everything the campaign
/// rules need, then write everything they decided. Round trips, not statements, were the worker's cost: seven
/// small queries per notification, then two, cost PostgreSQL and the worker more than the work itself. Both are
/// prepared once per connection (parsing and planning them anew was a large share of PostgreSQL's time per job).
public enum SubscriberStore {
    /// The subscriptions' rows, created empty if new and locked until the transaction ends (jobs of one subscriber
    /// run one after the other), with each subscriber's offer history: decisions that were not skips, and the live
    /// offer. One statement, whatever the number of subscribers; they are locked in one order (sorted here), so two
    /// batches sharing subscribers cannot deadlock. Each key at most once; the answer is in the keys' order.
    /// `accounts`: the app account each subscriber's notification names; a withdrawal of consent for it
    /// (RESCIND_CONSENT) is read into the state's `consentRescindedAt` in the same statement.
    public static func lockWithHistory(
        _ subscribers: [SubscriberKey],
        accounts: [SubscriberKey: String] = [:],
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> [(SubscriptionState, OfferHistory)] {
        let sorted = subscribers.sorted {
            ($0.bundleId, $0.environment, $0.originalTransactionId) < ($1.bundleId, $1.environment, $1.originalTransactionId)
        }
        var loaded: [SubscriberKey: (SubscriptionState, OfferHistory)] = [:]
        let statement = LockWithHistoryStatement(subscribers: sorted, accounts: accounts)
        for (state, history) in try await connection.run(statement, logger: logger) {
            loaded[state.subscriber] = (state, history)
        }
        return try subscribers.map { key in
            guard let row = loaded[key] else { throw PostgresRowMissing(what: "subscription \(key.originalTransactionId)") }
            return row
        }
    }

    /// One subscriber's ``lockWithHistory(_:connection:logger:)``.
    public static func lockWithHistory(
        _ subscriber: SubscriberKey,
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> (SubscriptionState, OfferHistory) {
        try await lockWithHistory([subscriber], connection: connection, logger: logger)[0]
    }

    /// A decision to store, with its offer when it offered (whose `decisionId` is `id`).
    public struct DecisionRecord: Sendable {
        public var id: UUID
        public var decision: CampaignDecision
        public var offer: NewOffer?

        public init(id: UUID, decision: CampaignDecision, offer: NewOffer?) {
            self.id = id
            self.decision = decision
            self.offer = offer
        }
    }

    /// What one notification (or a delayed campaign's fire) writes for its subscriber.
    public struct Write: Sendable {
        public var state: SubscriptionState
        /// Whether `state` is written (false: the notification changed nothing, or was older than the state).
        public var stateChanged: Bool
        public var decisions: [DecisionRecord]
        public var notificationUUID: UUID
        /// The notification's signedDate.
        public var triggeredAt: Date

        public init(state: SubscriptionState, stateChanged: Bool, decisions: [DecisionRecord], notificationUUID: UUID, triggeredAt: Date) {
            self.state = state
            self.stateChanged = stateChanged
            self.decisions = decisions
            self.notificationUUID = notificationUUID
            self.triggeredAt = triggeredAt
        }
    }

    /// Writes, in one statement, the new states (of the writes whose state changed), every decision and the offers
    /// of those that offered. A decision a campaign already made on a notification is not written again, nor its
    /// offer: the offers insert reads the decisions insert's RETURNING. At most one write per subscriber (a
    /// subscription row is updated once per statement).
    public static func persist(_ writes: [Write], connection: PostgresConnection, logger: Logger) async throws {
        guard writes.contains(where: { $0.stateChanged || !$0.decisions.isEmpty }) else { return }
        _ = try await connection.run(PersistStatement(writes: writes), logger: logger)
    }
}
