import Foundation
import PostgresNIO
import ReclaimDomain

/// ``SubscriberStore/persist(_:connection:logger:)``'s statement, for a whole batch of subscribers at once: the
/// states that changed, every decision (a decision a campaign already made on a notification is not written
/// again) and the offers of the decisions just written (``OfferInsert``, reading the decisions insert's RETURNING).
///
/// The states go in as one JSON array read by `jsonb_to_recordset`, which carries NULL and the `text[]` column as
/// themselves (PostgresNIO's array encoders carry neither); its times are whole microseconds since 2000, exactly
/// what PostgresNIO sends for a `Date`, so a state written here reads back as it reads back from a bound `Date`.
struct PersistStatement: PostgresPreparedStatement {
    static let sql = """
        WITH upd AS (
            -- An upsert, though every row exists (the batch locked it): each row is then found by a probe of the
            -- primary key. An UPDATE … FROM the JSON rows was planned as a hash join over a scan of the whole
            -- table (the function's row estimate is a fixed 100), a cost that grew with the subscriber count.
            INSERT INTO reclaim.subscriptions AS s (
                bundle_id, environment, original_transaction_id, app_account_token, product_id, subscription_group_id, status,
                auto_renew, auto_renew_product_id, expires_at, expiration_intent, in_billing_retry, grace_period_expires_at,
                eligible_win_back_offer_ids, storefront, first_purchase_at, last_transaction_id, last_notification_type, last_subtype,
                last_signed_date, last_notification_uuid)
            SELECT x.bundle_id, x.environment, x.original_transaction_id, x.app_account_token, x.product_id, x.subscription_group_id,
                   x.status, x.auto_renew, x.auto_renew_product_id, \(time("x.expires_at")), x.expiration_intent, x.in_billing_retry,
                   \(time("x.grace_period_expires_at")), x.eligible_win_back_offer_ids, x.storefront, \(time("x.first_purchase_at")),
                   x.last_transaction_id, x.last_notification_type, x.last_subtype, \(time("x.last_signed_date")), x.last_notification_uuid
            FROM jsonb_to_recordset($1::text::jsonb) AS x(
                bundle_id text, environment text, original_transaction_id text, app_account_token uuid, product_id text,
                subscription_group_id text, status text, auto_renew boolean, auto_renew_product_id text, expires_at bigint,
                expiration_intent smallint, in_billing_retry boolean, grace_period_expires_at bigint, eligible_win_back_offer_ids text[],
                storefront text, first_purchase_at bigint, last_transaction_id text, last_notification_type text, last_subtype text,
                last_signed_date bigint, last_notification_uuid uuid)
            ON CONFLICT (bundle_id, environment, original_transaction_id) DO UPDATE SET
                app_account_token = EXCLUDED.app_account_token, product_id = EXCLUDED.product_id,
                subscription_group_id = EXCLUDED.subscription_group_id, status = EXCLUDED.status, auto_renew = EXCLUDED.auto_renew,
                auto_renew_product_id = EXCLUDED.auto_renew_product_id, expires_at = EXCLUDED.expires_at,
                expiration_intent = EXCLUDED.expiration_intent, in_billing_retry = EXCLUDED.in_billing_retry,
                grace_period_expires_at = EXCLUDED.grace_period_expires_at, eligible_win_back_offer_ids = EXCLUDED.eligible_win_back_offer_ids,
                storefront = EXCLUDED.storefront, first_purchase_at = EXCLUDED.first_purchase_at,
                last_transaction_id = EXCLUDED.last_transaction_id, last_notification_type = EXCLUDED.last_notification_type,
                last_subtype = EXCLUDED.last_subtype, last_signed_date = EXCLUDED.last_signed_date,
                last_notification_uuid = EXCLUDED.last_notification_uuid, updated_at = now()
        ), dec AS (
            INSERT INTO reclaim.campaign_decisions (
                id, campaign_id, bundle_id, environment, original_transaction_id, app_account_token, notification_uuid,
                triggered_at, outcome, reason, variant_id)
            SELECT d.id, d.campaign, d.bundle_id, d.environment, d.otid, NULLIF(d.token, '\(OfferInsert.nilUUID)'), d.notification,
                   d.triggered_at, d.outcome, d.reason, NULLIF(d.variant, '')
            FROM unnest($2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::uuid[],
                        $11::uuid[], $12::timestamptz[])
                 AS d(id, campaign, outcome, reason, variant, bundle_id, environment, otid, token, notification, triggered_at)
            ON CONFLICT (campaign_id, notification_uuid) DO NOTHING
            RETURNING id
        )
        \(OfferInsert.sql(firstParameter: 13, where: "o.decision_id IN (SELECT id FROM dec)"))
        """
    typealias Row = Int

    let writes: [SubscriberStore.Write]

    /// A time column from its microseconds since 2000-01-01 (PostgreSQL's own epoch); NULL stays NULL.
    private static func time(_ column: String) -> String {
        "timestamptz '2000-01-01 00:00:00+00' + \(column) * interval '1 microsecond'"
    }

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 12 + OfferInsert.parameterCount)
        let states = writes.filter(\.stateChanged).map { StateRow($0.state) }
        bindings.append(String(decoding: try JSONEncoder().encode(states), as: UTF8.self))
        let decisions = writes.flatMap { write in write.decisions.map { (write, $0) } }
        bindings.append(decisions.map(\.1.id))
        bindings.append(decisions.map(\.1.decision.campaign.id))
        bindings.append(decisions.map(\.1.decision.outcome.rawValue))
        bindings.append(decisions.map(\.1.decision.reason))
        // '' for a campaign without variants (arrays cannot carry NULL; NULLIF restores it).
        bindings.append(decisions.map { $0.1.decision.variant?.id ?? "" })
        bindings.append(decisions.map(\.0.state.bundleId))
        bindings.append(decisions.map(\.0.state.environment))
        bindings.append(decisions.map(\.0.state.originalTransactionId))
        bindings.append(decisions.map { $0.0.state.appAccountToken ?? OfferInsert.nilUUID })
        bindings.append(decisions.map(\.0.notificationUUID))
        bindings.append(decisions.map(\.0.triggeredAt))
        OfferInsert.bind(
            decisions.compactMap { write, record in
                record.offer.map {
                    OfferInsert.Row(
                        offer: $0,
                        subscriber: write.state.subscriber,
                        appAccountToken: write.state.appAccountToken,
                        source: write.notificationUUID,
                        triggeredAt: write.triggeredAt
                    )
                }
            },
            into: &bindings
        )
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Int { 0 }

    /// One subscription's columns as `jsonb_to_recordset` reads them (a nil is left out: NULL).
    struct StateRow: Encodable {
        let bundle_id: String
        let environment: String
        let original_transaction_id: String
        let app_account_token: UUID?
        let product_id: String?
        let subscription_group_id: String?
        let status: String
        let auto_renew: Bool?
        let auto_renew_product_id: String?
        let expires_at: Int64?
        let expiration_intent: Int16?
        let in_billing_retry: Bool?
        let grace_period_expires_at: Int64?
        let eligible_win_back_offer_ids: [String]
        let storefront: String?
        let first_purchase_at: Int64?
        let last_transaction_id: String?
        let last_notification_type: String?
        let last_subtype: String?
        let last_signed_date: Int64?
        let last_notification_uuid: UUID?

        init(_ state: SubscriptionState) {
            bundle_id = state.bundleId
            environment = state.environment
            original_transaction_id = state.originalTransactionId
            app_account_token = state.appAccountToken
            product_id = state.productId
            subscription_group_id = state.subscriptionGroupId
            status = state.status.rawValue
            auto_renew = state.autoRenew
            auto_renew_product_id = state.autoRenewProductId
            expires_at = state.expiresAt.map(Self.microseconds)
            // Apple's expirationIntent is 1–5; a signed payload's out-of-range number is dropped, never trapped on.
            expiration_intent = state.expirationIntent.flatMap { Int16(exactly: $0) }
            in_billing_retry = state.inBillingRetry
            grace_period_expires_at = state.gracePeriodExpiresAt.map(Self.microseconds)
            eligible_win_back_offer_ids = state.eligibleWinBackOfferIds
            storefront = state.storefront
            first_purchase_at = state.firstPurchaseAt.map(Self.microseconds)
            last_transaction_id = state.lastTransactionId
            last_notification_type = state.lastNotificationType
            last_subtype = state.lastSubtype
            last_signed_date = state.lastSignedDate.map(Self.microseconds)
            last_notification_uuid = state.lastNotificationUUID
        }

        private static let postgresEpoch = Date(timeIntervalSince1970: 946_684_800)

        /// Microseconds since 2000-01-01, truncated as PostgresNIO truncates a bound `Date`; clamped, since a date
        /// from a signed payload is outside input and `Int64(_:)` traps on what it cannot hold.
        static func microseconds(_ date: Date) -> Int64 {
            let value = date.timeIntervalSince(postgresEpoch) * 1_000_000
            guard value.isFinite else { return 0 }
            return Int64(max(min(value, 9.2e18), -9.2e18))
        }
    }
}
