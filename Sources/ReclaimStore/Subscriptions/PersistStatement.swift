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
/// The decisions and the offers go in as arrays (``UnnestColumns``). The SQL is rendered once from ``statement``,
/// which also binds each execution's values, so its parameters are numbered in one place.
struct PersistStatement: PostgresPreparedStatement {
    static let sql = statement.sql

    private static let statement: SQLFragment<Input> = """
        WITH upd AS (
            -- An upsert, though every row exists (the batch locked it): each row is then found by a probe of the
            -- primary key. An UPDATE … FROM the JSON rows was planned as a hash join over a scan of the whole
            -- table (the function's row estimate is a fixed 100), a cost that grew with the subscriber count.
            INSERT INTO reclaim.subscriptions AS s (
                bundle_id, environment, original_transaction_id, app_account_token, product_id, subscription_group_id, status,
                auto_renew, auto_renew_product_id, expires_at, expiration_intent, in_billing_retry, grace_period_expires_at,
                eligible_win_back_offer_ids, storefront, first_purchase_at, last_transaction_id, last_notification_type, last_subtype,
                last_signed_date, last_notification_uuid, app_transaction_id, consent_rescinded_at)
            SELECT x.bundle_id, x.environment, x.original_transaction_id, x.app_account_token, x.product_id, x.subscription_group_id,
                   x.status, x.auto_renew, x.auto_renew_product_id, \(unescaped: time("x.expires_at")), x.expiration_intent,
                   x.in_billing_retry, \(unescaped: time("x.grace_period_expires_at")), x.eligible_win_back_offer_ids, x.storefront,
                   \(unescaped: time("x.first_purchase_at")), x.last_transaction_id, x.last_notification_type, x.last_subtype,
                   \(unescaped: time("x.last_signed_date")), x.last_notification_uuid, x.app_transaction_id,
                   -- A subscription of an app account whose consent was already withdrawn is marked as it is written.
                   coalesce(\(unescaped: time("x.consent_rescinded_at")), (
                       SELECT c.rescinded_at FROM reclaim.rescinded_consents c
                       WHERE c.bundle_id = x.bundle_id AND c.environment = x.environment AND c.app_transaction_id = x.app_transaction_id))
            FROM jsonb_to_recordset(\(bind: \.states)::text::jsonb) AS x(
                bundle_id text, environment text, original_transaction_id text, app_account_token uuid, product_id text,
                subscription_group_id text, status text, auto_renew boolean, auto_renew_product_id text, expires_at bigint,
                expiration_intent smallint, in_billing_retry boolean, grace_period_expires_at bigint, eligible_win_back_offer_ids text[],
                storefront text, first_purchase_at bigint, last_transaction_id text, last_notification_type text, last_subtype text,
                last_signed_date bigint, last_notification_uuid uuid, app_transaction_id text, consent_rescinded_at bigint)
            ON CONFLICT (bundle_id, environment, original_transaction_id) DO UPDATE SET
                app_account_token = EXCLUDED.app_account_token, product_id = EXCLUDED.product_id,
                subscription_group_id = EXCLUDED.subscription_group_id, status = EXCLUDED.status, auto_renew = EXCLUDED.auto_renew,
                auto_renew_product_id = EXCLUDED.auto_renew_product_id, expires_at = EXCLUDED.expires_at,
                expiration_intent = EXCLUDED.expiration_intent, in_billing_retry = EXCLUDED.in_billing_retry,
                grace_period_expires_at = EXCLUDED.grace_period_expires_at, eligible_win_back_offer_ids = EXCLUDED.eligible_win_back_offer_ids,
                storefront = EXCLUDED.storefront, first_purchase_at = EXCLUDED.first_purchase_at,
                last_transaction_id = EXCLUDED.last_transaction_id, last_notification_type = EXCLUDED.last_notification_type,
                last_subtype = EXCLUDED.last_subtype, last_signed_date = EXCLUDED.last_signed_date,
                last_notification_uuid = EXCLUDED.last_notification_uuid, app_transaction_id = EXCLUDED.app_transaction_id,
                consent_rescinded_at = coalesce(s.consent_rescinded_at, EXCLUDED.consent_rescinded_at), updated_at = now()
        ), dec AS (
            \(decisions.insert(into: "reclaim.campaign_decisions"), from: \.decisions)
            ON CONFLICT (campaign_id, notification_uuid) DO NOTHING
            RETURNING id
        )
        \(OfferInsert.insert(where: "o.decision_id IN (SELECT id FROM dec)"), from: \.offers)
        """
    typealias Row = Int

    let writes: [SubscriberStore.Write]

    /// A time column from its microseconds since 2000-01-01 (PostgreSQL's own epoch); NULL stays NULL.
    private static func time(_ column: String) -> String {
        "timestamptz '2000-01-01 00:00:00+00' + \(column) * interval '1 microsecond'"
    }

    /// A decision with the write it is part of: one element of the decisions' arrays.
    private struct Decision {
        let write: SubscriberStore.Write
        let record: SubscriberStore.DecisionRecord
    }

    private static let decisions = UnnestColumns<Decision>(
        alias: "d",
        [
            .init("id", "uuid") { $0.record.id },
            .init("campaign_id", "text") { $0.record.decision.campaign.id },
            .init("bundle_id", "text") { $0.write.state.bundleId },
            .init("environment", "text") { $0.write.state.environment },
            .init("original_transaction_id", "text") { $0.write.state.originalTransactionId },
            .nullable("app_account_token") { $0.write.state.appAccountToken },
            .init("notification_uuid", "uuid") { $0.write.notificationUUID },
            .init("triggered_at", "timestamptz") { $0.write.triggeredAt },
            .init("outcome", "text") { $0.record.decision.outcome.rawValue },
            .init("reason", "text") { $0.record.decision.reason },
            // nil for a campaign without variants.
            .nullable("variant_id") { $0.record.decision.variant?.id },
        ]
    )

    /// What ``statement`` binds, each list built once per execution (its fragments read them once per column).
    private struct Input {
        let states: String
        let decisions: [Decision]
        let offers: [OfferInsert.Row]
    }

    func makeBindings() throws -> PostgresBindings {
        let states = writes.filter(\.stateChanged).map { StateRow($0.state) }
        let decisions = writes.flatMap { write in write.decisions.map { Decision(write: write, record: $0) } }
        let input = Input(
            states: String(decoding: try JSONEncoder().encode(states), as: UTF8.self),
            decisions: decisions,
            offers: decisions.compactMap { decision in
                decision.record.offer.map {
                    OfferInsert.Row(
                        offer: $0,
                        subscriber: decision.write.state.subscriber,
                        appAccountToken: decision.write.state.appAccountToken,
                        source: decision.write.notificationUUID,
                        triggeredAt: decision.write.triggeredAt
                    )
                }
            }
        )
        var bindings = PostgresBindings(capacity: Self.statement.parameterCount)
        Self.statement.bind(input, into: &bindings)
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
        let app_transaction_id: String?
        let consent_rescinded_at: Int64?

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
            app_transaction_id = state.appTransactionId
            consent_rescinded_at = state.consentRescindedAt.map(Self.microseconds)
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
