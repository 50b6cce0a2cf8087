import Foundation
import PostgresNIO
import ReclaimDomain

/// ``SubscriberStore/lockWithHistory(_:accounts:connection:logger:)``'s statement, for a whole batch of subscribers at
/// once: upserts and locks each subscription's row (DO UPDATE, not DO NOTHING, so an existing row is locked and
/// returned by the same statement) and reads each subscriber's decisions that were not skips and its live offer.
///
/// The rows are upserted, so locked, in the order given: callers sort the keys, so two batches that share
/// subscribers lock them in the same order and cannot deadlock. A key may appear once (an upsert cannot touch
/// one row twice).
struct LockWithHistoryStatement: PostgresPreparedStatement {
    static let sql = """
        WITH k AS (
            SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])
                WITH ORDINALITY AS k(bundle_id, environment, original_transaction_id, app_transaction_id, n)
        ), s AS (
            INSERT INTO reclaim.subscriptions AS s (bundle_id, environment, original_transaction_id)
            SELECT bundle_id, environment, original_transaction_id FROM k ORDER BY n
            ON CONFLICT (bundle_id, environment, original_transaction_id) DO UPDATE SET bundle_id = s.bundle_id
            RETURNING \(SubscriptionRow.columnList())
        )
        SELECT s.*, d.campaigns, d.outcomes, d.times, d.variants,
               o.id, o.campaign_id, o.priority, o.product_id, o.offer_identifier, o.triggered_at, o.grant_id IS NOT NULL,
               r.times, r.offers,
               -- A withdrawal of consent (RESCIND_CONSENT) for the app account the notification names, or the one the
               -- subscription names: a subscription first naming its account after the withdrawal is restricted too.
               -- Kept as a one-way hash once a subscriber of the account was forgotten (SubscriberErasure.consentKey).
               (SELECT min(c.rescinded_at) FROM reclaim.rescinded_consents c
                CROSS JOIN LATERAL (SELECT coalesce(nullif(k.app_transaction_id, ''), s.app_transaction_id) AS account) a
                WHERE c.bundle_id = s.bundle_id AND c.environment = s.environment
                  AND c.app_transaction_id IN (a.account, \(SubscriberErasure.consentKey("a.account"))))
        FROM s
        JOIN k ON k.bundle_id = s.bundle_id AND k.environment = s.environment AND k.original_transaction_id = s.original_transaction_id
        CROSS JOIN LATERAL (
            SELECT coalesce(array_agg(campaign_id ORDER BY triggered_at, id), '{}'), coalesce(array_agg(outcome ORDER BY triggered_at, id), '{}'),
                   coalesce(array_agg(triggered_at ORDER BY triggered_at, id), '{}'),
                   coalesce(array_agg(coalesce(variant_id, '') ORDER BY triggered_at, id), '{}')
            FROM reclaim.campaign_decisions d
            WHERE d.bundle_id = s.bundle_id AND d.environment = s.environment AND d.original_transaction_id = s.original_transaction_id
              AND d.outcome <> 'skipped'
        ) AS d(campaigns, outcomes, times, variants)
        CROSS JOIN LATERAL \(DiscountsStatement.lateral(over: "s")) AS r(times, offers)
        LEFT JOIN reclaim.offers o
          ON o.bundle_id = s.bundle_id AND o.environment = s.environment AND o.original_transaction_id = s.original_transaction_id
         AND o.state IN ('ready', 'delivered')
        """
    typealias Row = (SubscriptionState, OfferHistory)

    let subscribers: [SubscriberKey]
    /// The app account (`appTransactionId`) each subscriber's notification names, if it names one.
    var accounts: [SubscriberKey: String] = [:]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 4)
        bindings.append(subscribers.map(\.bundleId))
        bindings.append(subscribers.map(\.environment))
        bindings.append(subscribers.map(\.originalTransactionId))
        bindings.append(subscribers.map { accounts[$0] ?? "" })  // '' for none: PostgresNIO's arrays carry no NULL
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        var cells = RowCells(row)
        var state = try SubscriptionRow.state(from: &cells)
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
        history.discounts = try DiscountsStatement.decode(&cells)
        if state.consentRescindedAt == nil { state.consentRescindedAt = try cells.next(Date?.self) }
        // The four arrays come from one aggregate pass and have one length; checked all the same (an index out of
        // range traps).
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

/// A subscriber's discounted redemptions (every door) as two arrays, times and `TYPE/IDENTIFIER`, for the app's
/// discount budget: a LATERAL subquery over the alias of a row with the subscriber's key columns.
enum DiscountsStatement {
    static func lateral(over alias: String) -> String {
        """
        (SELECT coalesce(array_agg(r.redeemed_at ORDER BY r.redeemed_at), '{}'),
                coalesce(array_agg(r.offer_type || '/' || r.offer_identifier ORDER BY r.redeemed_at), '{}')
         FROM reclaim.offer_redemptions r
         WHERE r.bundle_id = \(alias).bundle_id AND r.environment = \(alias).environment
           AND r.original_transaction_id = \(alias).original_transaction_id)
        """
    }

    static func decode(_ cells: inout RowCells) throws -> [DiscountBudget.Spent] {
        let times = try cells.next([Date].self)
        let offers = try cells.next([String].self)
        return zip(times, offers).map { DiscountBudget.Spent(at: $0, offer: $1) }
    }
}
