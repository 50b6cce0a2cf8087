import Foundation
import Logging
import PostgresNIO
import ReclaimDomain

/// `reclaim.cancel_sheet_decisions` and the campaigns' switch (`reclaim.campaigns.paused_at`): what a Retention
/// Messaging answer reads (one statement) and writes (a batch insert), and `reclaim campaigns pause`/`resume`.
public enum CancelSheetStore {
    /// `follows` of a campaign's very first decision for a subscriber (NULL would escape the unique index, and the nil
    /// UUID stands for NULL in the insert's arrays).
    static let followsNothing = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1))
    /// What the rules need for one subscriber: the stored state (nil when Reclaim never saw a notification of
    /// them), their first cancel-sheet decisions, and the app's switched-off campaigns.
    public struct Context: Sendable {
        public var state: SubscriptionState?
        public var earlier: [CancelSheetEvaluator.PastDecision]
        public var paused: Set<String>
        /// Their discounted redemptions through every door (``DiscountBudget``).
        public var discounts: [DiscountBudget.Spent]
        /// The decision recorded for this very request (Apple's `requestIdentifier`): a replay is answered from it and
        /// records nothing new.
        public var recorded: RecordedAnswer?
        /// The subscriber was forgotten on request (reclaim subscribers forget): answered {}, nothing recorded.
        public var forgotten: Bool
    }

    /// A decision as recorded, enough to answer its request again.
    public struct RecordedAnswer: Sendable, Equatable {
        public var campaignId: String
        public var variantId: String?
        /// `answered`, `held_out`, `held_back` or `too_late`.
        public var outcome: String
        public var shadow: Bool
        /// `nothing`, `message`, `alternate_product` or `promotional_offer`.
        public var answer: String
        public var messageIdentifier: String?
        public var answerProductId: String?
        public var offerIdentifier: String?
    }

    /// A decision as it is recorded.
    public struct Record: Sendable {
        public var id: UUID
        public var subscriber: SubscriberKey
        public var requestIdentifier: String
        public var productId: String
        public var decision: CancelSheetDecision
        /// Past this moment of this process's monotonic clock the record is not inserted: its answer could no longer
        /// leave in time. The statement carries what remains of it when sent, and PostgreSQL compares that with its
        /// own clock from the statement's start: one clock, so no skew between machines decides an answer.
        public var deadline: ContinuousClock.Instant
        /// The stored subscription's billing plan (Apple's realtime request names none); nil: unknown.
        public var billingPlanType: String?

        public init(
            id: UUID,
            subscriber: SubscriberKey,
            requestIdentifier: String,
            productId: String,
            decision: CancelSheetDecision,
            deadline: ContinuousClock.Instant,
            billingPlanType: String? = nil
        ) {
            self.billingPlanType = billingPlanType
            self.id = id
            self.subscriber = subscriber
            self.requestIdentifier = requestIdentifier
            self.productId = productId
            self.decision = decision
            self.deadline = deadline
        }
    }

    public static func context(
        of subscriber: SubscriberKey,
        requestIdentifier: String,
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> Context {
        let rows = try await connection.run(ContextStatement(subscriber: subscriber, requestIdentifier: requestIdentifier), logger: logger)
        guard let row = rows.first else { throw PostgresRowMissing(what: "the cancel-sheet context row") }
        return row
    }

    /// Inserts every record in one statement; returns, for each, whether it was inserted. It is not when another
    /// request's first decision after the same one came first (the unique `follows`: the caller reads it and repeats
    /// it), when its deadline had passed, or when its subscriber is forgotten.
    ///
    /// The transaction must share ``WorkerBarrier`` in an earlier statement (the recorder does, before its turn): an
    /// erasure under way then commits before this statement's snapshot is taken, and `is_forgotten` sees it.
    public static func record(_ records: [Record], connection: PostgresConnection, logger: Logger) async throws -> [Bool] {
        guard !records.isEmpty else { return [] }
        let inserted = Set(try await connection.run(RecordStatement(records: records), logger: logger))
        return records.map { inserted.contains($0.id) }
    }

    /// Marks recorded decisions whose answer did not leave in time `too_late` (Apple got `{}`), in one statement.
    public static func markTooLate(_ ids: [UUID], postgres: Database, logger: Logger) async throws {
        try await postgres.query(
            "UPDATE reclaim.cancel_sheet_decisions SET outcome = 'too_late' WHERE id = ANY(\(ids)) AND outcome = 'answered'",
            logger: logger
        )
    }

    /// Settles the save outcome of up to `limit` first decisions whose window has ended (one statement); returns how
    /// many. Saved: the answered offer redeemed in the window, a renewal in the window, or auto-renew on at the end;
    /// lost: auto-renew off, or the subscription expired, revoked or refunded; unknown: no state of it.
    public static func settle(limit: Int, connection: PostgresConnection, logger: Logger) async throws -> Int {
        let rows = try await connection.query(
            """
            WITH due AS (
                SELECT d.id,
                       CASE WHEN EXISTS (
                                SELECT 1 FROM reclaim.offer_redemptions r
                                WHERE d.answer = 'promotional_offer' AND r.bundle_id = d.bundle_id AND r.environment = d.environment
                                  AND r.original_transaction_id = d.original_transaction_id AND r.offer_identifier = d.offer_identifier
                                  AND r.redeemed_at >= d.decided_at AND r.redeemed_at < d.decided_at + d.save_window)
                            THEN 'saved'
                            WHEN s.bundle_id IS NULL THEN 'unknown'
                            WHEN EXISTS (
                                SELECT 1 FROM reclaim.notifications n
                                WHERE n.bundle_id = d.bundle_id AND n.environment = d.environment
                                  AND n.original_transaction_id = d.original_transaction_id AND n.notification_type = 'DID_RENEW'
                                  AND n.signed_date > d.decided_at AND n.signed_date < d.decided_at + d.save_window)
                            THEN 'saved'
                            WHEN s.auto_renew IS TRUE AND s.status NOT IN ('expired', 'revoked', 'refunded') THEN 'saved'
                            WHEN s.auto_renew IS FALSE OR s.status IN ('expired', 'revoked', 'refunded') THEN 'lost'
                            ELSE 'unknown' END AS outcome,
                       CASE WHEN s.auto_renew IS TRUE THEN coalesce(s.auto_renew_product_id, s.product_id) END AS product
                FROM reclaim.cancel_sheet_decisions d
                LEFT JOIN reclaim.subscriptions s
                  ON s.bundle_id = d.bundle_id AND s.environment = d.environment AND s.original_transaction_id = d.original_transaction_id
                WHERE d.settled_at IS NULL AND d.repeat_of IS NULL AND d.decided_at + d.save_window <= now()
                ORDER BY d.decided_at
                LIMIT \(limit)
                FOR UPDATE OF d SKIP LOCKED)
            UPDATE reclaim.cancel_sheet_decisions d
            SET save_outcome = due.outcome, saved_product_id = CASE WHEN due.outcome = 'saved' THEN due.product END, settled_at = now()
            FROM due WHERE d.id = due.id
            RETURNING 1
            """,
            logger: logger
        )
        var count = 0
        for try await _ in rows { count += 1 }
        return count
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
            d.ids, d.campaigns, d.outcomes, d.variants, d.times, r.times, r.offers,
            q.campaign_id, q.variant_id, q.outcome, q.shadow, q.answer, q.message_identifier, q.answer_product_id, q.offer_identifier,
            reclaim.is_forgotten($1, $3, NULL), s.bundle_id IS NOT NULL, \(SubscriptionRow.columnList(prefix: "s."))
        FROM (SELECT $1::text AS bundle_id, $2::text AS environment, $3::text AS original_transaction_id) k
        CROSS JOIN LATERAL (
            SELECT coalesce(array_agg(id ORDER BY decided_at, id), '{}'), coalesce(array_agg(campaign_id ORDER BY decided_at, id), '{}'),
                   coalesce(array_agg(outcome ORDER BY decided_at, id), '{}'), coalesce(array_agg(coalesce(variant_id, '') ORDER BY decided_at, id), '{}'),
                   coalesce(array_agg(decided_at ORDER BY decided_at, id), '{}')
            FROM reclaim.cancel_sheet_decisions x
            WHERE x.bundle_id = k.bundle_id AND x.environment = k.environment AND x.original_transaction_id = k.original_transaction_id
              AND x.repeat_of IS NULL
        ) AS d(ids, campaigns, outcomes, variants, times)
        CROSS JOIN LATERAL \(DiscountsStatement.lateral(over: "k")) AS r(times, offers)
        LEFT JOIN LATERAL (
            SELECT * FROM reclaim.cancel_sheet_decisions y
            WHERE y.request_identifier = $4 AND y.bundle_id = k.bundle_id AND y.environment = k.environment
              AND y.original_transaction_id = k.original_transaction_id
            ORDER BY y.decided_at LIMIT 1
        ) AS q ON true
        LEFT JOIN reclaim.subscriptions s
          ON s.bundle_id = k.bundle_id AND s.environment = k.environment AND s.original_transaction_id = k.original_transaction_id
        """
    typealias Row = CancelSheetStore.Context

    let subscriber: SubscriberKey
    let requestIdentifier: String

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 4)
        bindings.append(subscriber.bundleId)
        bindings.append(subscriber.environment)
        bindings.append(subscriber.originalTransactionId)
        bindings.append(requestIdentifier)
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
        let discounts = try DiscountsStatement.decode(&cells)
        let recordedCampaign = try cells.next(String?.self)
        let recordedVariant = try cells.next(String?.self)
        let recordedOutcome = try cells.next(String?.self)
        let recordedShadow = try cells.next(Bool?.self)
        let recordedAnswer = try cells.next(String?.self)
        let recordedMessage = try cells.next(String?.self)
        let recordedProduct = try cells.next(String?.self)
        let recordedOffer = try cells.next(String?.self)
        let forgotten = try cells.next(Bool.self)
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
        return .init(
            state: known ? try SubscriptionRow.state(from: &cells) : nil,
            earlier: earlier,
            paused: Set(paused),
            discounts: discounts,
            recorded: recordedCampaign.map { campaign in
                CancelSheetStore.RecordedAnswer(
                    campaignId: campaign,
                    variantId: recordedVariant,
                    outcome: recordedOutcome ?? "",
                    shadow: recordedShadow ?? false,
                    answer: recordedAnswer ?? "nothing",
                    messageIdentifier: recordedMessage,
                    answerProductId: recordedProduct,
                    offerIdentifier: recordedOffer
                )
            },
            forgotten: forgotten
        )
    }
}

/// ``CancelSheetStore/record(_:connection:logger:)``'s batch insert: the ids inserted.
///
/// - A first decision's `follows` is unique with its subscriber and campaign (`cancel_sheet_decisions_first_idx`):
///   `ON CONFLICT DO NOTHING` leaves out the second of two concurrent first decisions after the same one, in this
///   batch or another, and its caller repeats the one recorded.
/// - A record past its deadline is not inserted: its answer would leave after Apple's budget, so it leaves as `{}` and
///   nothing says otherwise. The deadline travels as the budget that remains when the statement is bound, measured
///   by PostgreSQL from the statement's start to `clock_timestamp()`: no wall clock of either machine is compared
///   with the other's (a skew near the budget once turned every answer into `{}`).
/// - A subscriber forgotten on request (`reclaim subscribers forget`) since the context was read is not recorded: an
///   erasure under way commits before this statement starts (``WorkerBarrier``, shared earlier in the transaction;
///   the remaining budget is bound after that wait), and `is_forgotten` sees it. Its caller reads the context again
///   and answers `{}`. Without this, a request about a subscriber Reclaim never stored, read while their erasure was
///   uncommitted, recorded them again.
/// - Apple waits for the answer, and the answer waits for this commit; it does not also wait for the WAL's flush to
///   disk (`synchronous_commit` off for this transaction, as the queue's claim does). A PostgreSQL crash may lose the
///   last fraction of a second of decisions, never a notification (ingest commits synchronously).
struct RecordStatement: PostgresPreparedStatement {
    static let sql = statement.sql
    static let statement: SQLFragment<[CancelSheetStore.Record]> = """
        \(columns.insert(into: "reclaim.cancel_sheet_decisions"))
        WHERE statement_timestamp() + make_interval(secs => r.remaining) > clock_timestamp()
          AND set_config('synchronous_commit', 'off', true) IS NOT NULL
          AND NOT reclaim.is_forgotten(r.bundle_id, r.original_transaction_id, NULL)
        ON CONFLICT DO NOTHING
        RETURNING id
        """
    typealias Row = UUID

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
            .interval("save_window") { Int64($0.decision.campaign.saveWindow) },
            .nullable("billing_plan_type") { $0.billingPlanType },
            .nullable("follows") { record in
                record.decision.repeatOf == nil ? (record.decision.follows ?? CancelSheetStore.followsNothing) : nil
            },
            // What remains of the budget as the statement is bound, just before it is sent.
            .filter("remaining", "float8") { record in (record.deadline - .now) / .seconds(1) },
        ]
    )

    let records: [CancelSheetStore.Record]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: Self.columns.columns.count)
        Self.statement.bind(records, into: &bindings)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> UUID { try row.decode(UUID.self) }
}
