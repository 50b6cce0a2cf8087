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
            INSERT INTO reclaim.subscriptions AS s (\(unescaped: SubscriptionRow.columnList()))
            SELECT \(unescaped: columns.map { $0.inserted(from: "x") }.joined(separator: ", "))
            FROM jsonb_to_recordset(\(bind: \.states)::text::jsonb) AS x(\(unescaped: columns.map { "\($0.name) \($0.recordType)" }.joined(separator: ", ")))
            ON CONFLICT (bundle_id, environment, original_transaction_id) DO UPDATE SET
                \(unescaped: columns.filter { !$0.isKey }.map { "\($0.name) = EXCLUDED.\($0.name)" }.joined(separator: ", ")), updated_at = now()
        ), dec AS (
            \(decisions.insert(into: "reclaim.campaign_decisions"), from: \.decisions)
            ON CONFLICT (campaign_id, notification_uuid) DO NOTHING
            RETURNING id
        )
        \(OfferInsert.insert(where: "o.decision_id IN (SELECT id FROM dec)"), from: \.offers)
        """
    typealias Row = Int

    let writes: [SubscriberStore.Write]

    private static let columns = SubscriptionRow.columns

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
            // The plan when decided: the reports split by it (a later switch of plan does not move the decision).
            .nullable("billing_plan_type") { $0.write.state.billingPlanType },
            // Where Apple's own win-back offers stood beside the campaign (the report's doors).
            .init("apple_win_back_listed", "boolean") { !$0.write.state.eligibleWinBackOfferIds.isEmpty },
        ]
    )

    /// What ``statement`` binds, each list built once per execution (its fragments read them once per column).
    private struct Input {
        let states: String
        let decisions: [Decision]
        let offers: [OfferInsert.Row]
    }

    func makeBindings() throws -> PostgresBindings {
        let states = writes.filter(\.stateChanged).map { Self.jsonRow($0.state) }
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

    /// One subscription's columns as `jsonb_to_recordset` reads them, by name (a nil is left out: NULL).
    static func jsonRow(_ state: SubscriptionState) -> [String: SubscriptionColumn.JSONValue] {
        var row: [String: SubscriptionColumn.JSONValue] = [:]
        for column in columns { row[column.name] = column.value(state) }
        return row
    }
}
