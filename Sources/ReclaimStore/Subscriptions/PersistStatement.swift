import Foundation
import PostgresNIO
import ReclaimDomain

/// ``SubscriberStore/persist(state:stateChanged:decisions:notificationUUID:triggeredAt:connection:logger:)``'s
/// statement: the state update (skipped by `$1` when nothing changed), the decisions (a decision this campaign
/// already made on this notification is not written again) and the offers of the decisions just written (``OfferInsert``,
/// reading the decisions insert's RETURNING).
struct PersistStatement: PostgresPreparedStatement {
    static let sql = """
        WITH upd AS (
            UPDATE reclaim.subscriptions SET
                app_account_token = $5, product_id = $6, subscription_group_id = $7, status = $8, auto_renew = $9,
                auto_renew_product_id = $10, expires_at = $11, expiration_intent = $12, in_billing_retry = $13,
                grace_period_expires_at = $14, eligible_win_back_offer_ids = $15, storefront = $16, first_purchase_at = $17,
                last_transaction_id = $18, last_notification_type = $19, last_subtype = $20, last_signed_date = $21,
                last_notification_uuid = $22, updated_at = now()
            WHERE $1 AND bundle_id = $2 AND environment = $3 AND original_transaction_id = $4
        ), dec AS (
            INSERT INTO reclaim.campaign_decisions (
                id, campaign_id, bundle_id, environment, original_transaction_id, app_account_token, notification_uuid,
                triggered_at, outcome, reason, variant_id)
            SELECT d.id, d.campaign, $2, $3, $4, $5, $23, $24, d.outcome, d.reason, NULLIF(d.variant, '')
            FROM unnest($25::uuid[], $26::text[], $27::text[], $28::text[], $29::text[]) AS d(id, campaign, outcome, reason, variant)
            ON CONFLICT (campaign_id, notification_uuid) DO NOTHING
            RETURNING id
        )
        \(OfferInsert.sql(firstParameter: 30, where: "o.decision_id IN (SELECT id FROM dec)"))
        """
    typealias Row = Int

    let state: SubscriptionState
    let stateChanged: Bool
    let decisions: [SubscriberStore.DecisionRecord]
    let notificationUUID: UUID
    let triggeredAt: Date

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 29 + OfferInsert.parameterCount)
        bindings.append(stateChanged)
        bindings.append(state.bundleId)
        bindings.append(state.environment)
        bindings.append(state.originalTransactionId)
        bindings.append(state.appAccountToken)
        bindings.append(state.productId)
        bindings.append(state.subscriptionGroupId)
        bindings.append(state.status.rawValue)
        bindings.append(state.autoRenew)
        bindings.append(state.autoRenewProductId)
        bindings.append(state.expiresAt)
        // Apple's expirationIntent is 1–5; a signed payload's out-of-range number is dropped, never trapped on.
        bindings.append(state.expirationIntent.flatMap { Int16(exactly: $0) })
        bindings.append(state.inBillingRetry)
        bindings.append(state.gracePeriodExpiresAt)
        bindings.append(state.eligibleWinBackOfferIds)
        bindings.append(state.storefront)
        bindings.append(state.firstPurchaseAt)
        bindings.append(state.lastTransactionId)
        bindings.append(state.lastNotificationType)
        bindings.append(state.lastSubtype)
        bindings.append(state.lastSignedDate)
        bindings.append(state.lastNotificationUUID)
        bindings.append(notificationUUID)
        bindings.append(triggeredAt)
        bindings.append(decisions.map(\.id))
        bindings.append(decisions.map(\.decision.campaign.id))
        bindings.append(decisions.map(\.decision.outcome.rawValue))
        bindings.append(decisions.map(\.decision.reason))
        // '' for a campaign without variants (arrays cannot carry NULL; NULLIF restores it).
        bindings.append(decisions.map { $0.decision.variant?.id ?? "" })
        OfferInsert.bind(
            decisions.compactMap(\.offer),
            subscriber: state.subscriber,
            appAccountToken: state.appAccountToken,
            source: notificationUUID,
            triggeredAt: triggeredAt,
            into: &bindings
        )
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Int { 0 }
}
