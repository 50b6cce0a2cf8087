import Foundation
import PostgresNIO
import ReclaimDomain

/// ``SubscriberStore/lockWithHistory(_:connection:logger:)``'s statement: upserts and locks the subscription's row
/// (DO UPDATE, not DO NOTHING, so an existing row is locked and returned by the same statement) and reads the
/// subscriber's decisions that were not skips and its live offer.
struct LockWithHistoryStatement: PostgresPreparedStatement {
    static let sql = """
        WITH s AS (
            INSERT INTO reclaim.subscriptions AS s (bundle_id, environment, original_transaction_id)
            VALUES ($1, $2, $3)
            ON CONFLICT (bundle_id, environment, original_transaction_id) DO UPDATE SET bundle_id = s.bundle_id
            RETURNING \(SubscriptionStore.columns)
        ), d AS (
            SELECT campaign_id, outcome, triggered_at, variant_id FROM reclaim.campaign_decisions
            WHERE bundle_id = $1 AND environment = $2 AND original_transaction_id = $3 AND outcome <> 'skipped'
        )
        SELECT s.*,
               ARRAY(SELECT campaign_id FROM d ORDER BY triggered_at), ARRAY(SELECT outcome FROM d ORDER BY triggered_at),
               ARRAY(SELECT triggered_at FROM d ORDER BY triggered_at), ARRAY(SELECT coalesce(variant_id, '') FROM d ORDER BY triggered_at),
               o.id, o.campaign_id, o.priority, o.product_id, o.offer_identifier, o.triggered_at, o.grant_id IS NOT NULL
        FROM s LEFT JOIN reclaim.offers o
          ON o.bundle_id = $1 AND o.environment = $2 AND o.original_transaction_id = $3 AND o.state IN ('ready', 'delivered')
        """
    typealias Row = (SubscriptionState, OfferHistory)

    let subscriber: SubscriberKey

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 3)
        bindings.append(subscriber.bundleId)
        bindings.append(subscriber.environment)
        bindings.append(subscriber.originalTransactionId)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        var cells = RowCells(row)
        let state = try SubscriptionStore.state(from: &cells)
        let campaigns = try cells.next([String].self)
        let outcomes = try cells.next([String].self)
        let times = try cells.next([Date].self)
        let variants = try cells.next([String].self)
        let liveId = try cells.next(UUID?.self)
        let liveCampaign = try cells.next(String?.self)
        let priority = try cells.next(Int?.self)
        let product = try cells.next(String?.self)
        let offer = try cells.next(String?.self)
        let triggeredAt = try cells.next(Date?.self)
        let isGrant = try cells.next(Bool?.self)
        var history = OfferHistory()
        // The four arrays come from one CTE and have one length; checked all the same (an index out of range traps).
        for (index, campaign) in campaigns.enumerated() where index < outcomes.count && index < times.count && index < variants.count {
            guard let outcome = CampaignDecision.Outcome(rawValue: outcomes[index]) else { continue }
            let variant = variants[index].isEmpty ? nil : variants[index]
            history.decisions.append(.init(campaignId: campaign, outcome: outcome, triggeredAt: times[index], variantId: variant))
        }
        if let liveId, let liveCampaign, let priority, let product, let offer, let triggeredAt {
            history.liveOffer = .init(
                id: liveId,
                campaignId: liveCampaign,
                priority: priority,
                productId: product,
                offerIdentifier: offer,
                triggeredAt: triggeredAt,
                isGrant: isGrant ?? false
            )
        }
        return (state, history)
    }
}
