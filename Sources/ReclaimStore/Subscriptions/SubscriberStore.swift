import Foundation
import Logging
import PostgresNIO
import ReclaimDomain

/// A job's two round trips to the database for one subscriber: read (and lock) everything the campaign rules
/// need, then write everything they decided. Round trips, not statements, were the worker's cost: seven small
/// queries per notification cost PostgreSQL and the worker more than the work itself. Both are prepared once
/// per connection (parsing and planning them anew was a large share of PostgreSQL's time per job).
public enum SubscriberStore {
    /// The subscription's row, created empty if new and locked until the transaction ends (jobs of one subscriber
    /// run one after the other), with the subscriber's offer history: decisions that were not skips, and the live
    /// offer. One statement.
    public static func lockWithHistory(
        _ subscriber: SubscriberKey,
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> (SubscriptionState, OfferHistory) {
        for try await loaded in try await connection.execute(LockWithHistoryStatement(subscriber: subscriber), logger: logger) {
            return loaded
        }
        throw PostgresRowMissing(what: "subscription \(subscriber.originalTransactionId)")
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

    /// Writes, in one statement, the new state (when `stateChanged`), the notification's decisions and the offers
    /// of those that offered. A decision this campaign already made on this notification is not written again,
    /// nor its offer: the offers insert reads the decisions insert's RETURNING.
    public static func persist(
        state: SubscriptionState,
        stateChanged: Bool,
        decisions: [DecisionRecord],
        notificationUUID: UUID,
        triggeredAt: Date,
        connection: PostgresConnection,
        logger: Logger
    ) async throws {
        guard stateChanged || !decisions.isEmpty else { return }
        let statement = PersistStatement(
            state: state,
            stateChanged: stateChanged,
            decisions: decisions,
            notificationUUID: notificationUUID,
            triggeredAt: triggeredAt
        )
        for try await _ in try await connection.execute(statement, logger: logger) {}
    }
}
