import Foundation
import Logging
import PostgresNIO
import ReclaimDomain

/// `reclaim.cancel_sheet_decisions` and the campaigns' switch (`reclaim.campaigns.paused_at`): what a Retention
/// Messaging answer reads (one statement) and writes (a batch insert), and `reclaim campaigns pause`/`resume`.
public enum CancelSheetStore {
    /// What the rules need for one subscriber: the stored state (nil when Reclaim never saw a notification of
    /// them), their first cancel-sheet decisions, and the app's switched-off campaigns.
    public struct Context: Sendable {
        public var state: SubscriptionState?
        public var earlier: [CancelSheetEvaluator.PastDecision]
        public var paused: Set<String>
    }

    /// A decision as it is recorded.
    public struct Record: Sendable {
        public var id: UUID
        public var subscriber: SubscriberKey
        public var requestIdentifier: String
        public var productId: String
        public var decision: CancelSheetDecision

        public init(id: UUID, subscriber: SubscriberKey, requestIdentifier: String, productId: String, decision: CancelSheetDecision) {
            self.id = id
            self.subscriber = subscriber
            self.requestIdentifier = requestIdentifier
            self.productId = productId
            self.decision = decision
        }
    }

    public static func context(of subscriber: SubscriberKey, connection: PostgresConnection, logger: Logger) async throws -> Context {
        let rows = try await connection.run(ContextStatement(subscriber: subscriber), logger: logger)
        guard let row = rows.first else { throw PostgresRowMissing(what: "the cancel-sheet context row") }
        return row
    }

    /// Inserts every record in one statement.
    public static func record(_ records: [Record], connection: PostgresConnection, logger: Logger) async throws {
        guard !records.isEmpty else { return }
        _ = try await connection.run(RecordStatement(records: records), logger: logger)
    }

    /// Switches `campaignId` off (`paused`) or on; false when no such campaign was ever configured.
    public static func setPaused(
        _ paused: Bool,
        campaignId: String,
        reason: String?,
        postgres: Database,
        logger: Logger
    ) async throws -> Bool {
        let rows = try await postgres.query(
            """
            UPDATE reclaim.campaigns
            SET paused_at = CASE WHEN \(paused) THEN coalesce(paused_at, now()) END,
                paused_reason = CASE WHEN \(paused) THEN \(reason) END
            WHERE id = \(campaignId) RETURNING id
            """,
            logger: logger
        )
        for try await _ in rows { return true }
        return false
    }

    /// The switched-off campaigns, with when and why.
    public static func paused(postgres: Database, logger: Logger) async throws -> [(id: String, at: Date, reason: String?)] {
        let rows = try await postgres.query(
            "SELECT id, paused_at, paused_reason FROM reclaim.campaigns WHERE paused_at IS NOT NULL ORDER BY id",
            logger: logger
        )
        var paused: [(id: String, at: Date, reason: String?)] = []
        for try await (id, at, reason) in rows.decode((String, Date, String?).self) { paused.append((id, at, reason)) }
        return paused
    }
}

/// ``CancelSheetStore/context(of:connection:logger:)``'s one statement: the paused campaigns of the app, the first
/// decisions of the subscriber (the partial index's rows) and the subscriber's state, NULLs when unknown (last, so
/// that an unknown subscriber's row is not decoded past the flag).
struct ContextStatement: PostgresPreparedStatement {
    static let sql = """
        SELECT
            (SELECT coalesce(array_agg(c.id), '{}') FROM reclaim.campaigns c WHERE c.bundle_id = $1 AND c.paused_at IS NOT NULL),
            d.ids, d.campaigns, d.outcomes, d.variants, d.times,
            s.bundle_id IS NOT NULL, \(SubscriptionStore.columns.split(separator: ",").map { "s." + $0.trimmingCharacters(in: .whitespacesAndNewlines) }.joined(separator: ", "))
        FROM (SELECT $1::text AS bundle_id, $2::text AS environment, $3::text AS original_transaction_id) k
        CROSS JOIN LATERAL (
            SELECT coalesce(array_agg(id ORDER BY decided_at), '{}'), coalesce(array_agg(campaign_id ORDER BY decided_at), '{}'),
                   coalesce(array_agg(outcome ORDER BY decided_at), '{}'), coalesce(array_agg(coalesce(variant_id, '') ORDER BY decided_at), '{}'),
                   coalesce(array_agg(decided_at ORDER BY decided_at), '{}')
            FROM reclaim.cancel_sheet_decisions x
            WHERE x.bundle_id = k.bundle_id AND x.environment = k.environment AND x.original_transaction_id = k.original_transaction_id
              AND x.repeat_of IS NULL
        ) AS d(ids, campaigns, outcomes, variants, times)
        LEFT JOIN reclaim.subscriptions s
          ON s.bundle_id = k.bundle_id AND s.environment = k.environment AND s.original_transaction_id = k.original_transaction_id
        """
    typealias Row = CancelSheetStore.Context

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
        let paused = try cells.next([String].self)
        let ids = try cells.next([UUID].self)
        let campaigns = try cells.next([String].self)
        let outcomes = try cells.next([String].self)
        let variants = try cells.next([String].self)
        let times = try cells.next([Date].self)
        let known = try cells.next(Bool.self)
        var earlier: [CancelSheetEvaluator.PastDecision] = []
        // One aggregate pass gives the five arrays one length; checked all the same (an index out of range traps).
        for index in ids.indices where index < campaigns.count && index < outcomes.count && index < variants.count && index < times.count {
            guard let outcome = CancelSheetDecision.Outcome(rawValue: outcomes[index]) else { continue }
            earlier.append(
                .init(
                    id: ids[index],
                    campaignId: campaigns[index],
                    outcome: outcome,
                    variantId: variants[index].isEmpty ? nil : variants[index],
                    decidedAt: times[index]
                )
            )
        }
        return .init(state: known ? try SubscriptionStore.state(from: &cells) : nil, earlier: earlier, paused: Set(paused))
    }
}

/// ``CancelSheetStore/record(_:connection:logger:)``'s batch insert.
struct RecordStatement: PostgresPreparedStatement {
    static let sql = columns.insert(into: "reclaim.cancel_sheet_decisions").sql
    typealias Row = Void

    static let columns = UnnestColumns<CancelSheetStore.Record>(
        alias: "r",
        [
            .init("id", "uuid") { $0.id },
            .init("campaign_id", "text") { $0.decision.campaign.id },
            .init("bundle_id", "text") { $0.subscriber.bundleId },
            .init("environment", "text") { $0.subscriber.environment },
            .init("original_transaction_id", "text") { $0.subscriber.originalTransactionId },
            .init("request_identifier", "text") { $0.requestIdentifier },
            .init("product_id", "text") { $0.productId },
            .init("outcome", "text") { $0.decision.outcome.rawValue },
            .init("shadow", "boolean") { $0.decision.campaign.shadow },
            .nullable("variant_id") { record in record.decision.variant.flatMap { $0.id.isEmpty ? nil : $0.id } },
            .init("answer", "text") { $0.decision.armAnswer?.kind ?? "nothing" },
            .nullable("message_identifier") { $0.decision.armAnswer?.messageIdentifier },
            .nullable("answer_product_id") { $0.decision.armAnswer?.productId },
            .nullable("offer_identifier") { $0.decision.armAnswer?.offerIdentifier },
            .nullable("repeat_of") { $0.decision.repeatOf },
            .init("reason", "text") { $0.decision.reason },
        ]
    )

    let records: [CancelSheetStore.Record]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: Self.columns.columns.count)
        Self.columns.insert(into: "reclaim.cancel_sheet_decisions").bind(records, into: &bindings)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws {}
}
