import Foundation
import Logging
import PostgresNIO

/// Forgetting a subscriber on request (`reclaim subscribers forget`, docs/privacy.md).
///
/// Every row that names the subscriber is redacted in place rather than deleted, so that counts and reports stay
/// true (a redeemed offer still counts in its campaign's funnel and revenue): identifiers are replaced by a
/// pseudonym that ties the subscriber's rows to each other and to no one (`forgotten:<erasure id>:<n>`), tokens
/// and transaction ids are cleared, signed payloads, signatures and bodies sent to Apple are emptied, and queued
/// jobs naming the subscriber are deleted. One-way hashes of the identifiers are kept
/// (`reclaim.forgotten_subscribers`): Apple keeps the original transaction id and will notify about it again, and
/// such a notification is dropped instead of bringing the subscriber back to the campaigns.
public enum SubscriberErasure {
    /// Every column that can name a subscriber, each redacted, replaced or deleted by `forget` (a test holds the
    /// schema to this list: a new column named like an identifier, a payload or a signature fails it until it is
    /// handled here or shown not to identify anyone).
    public static let identifyingColumns: Set<String> = [
        "subscriptions.original_transaction_id", "subscriptions.app_account_token", "subscriptions.last_transaction_id",
        "subscriptions.app_transaction_id", "rescinded_consents.app_transaction_id",  // the app account; kept as a one-way hash
        "notifications.original_transaction_id", "notifications.transaction_id", "notifications.app_account_token",
        "notifications.signed_payload",
        "campaign_decisions.original_transaction_id", "campaign_decisions.app_account_token",
        "offers.original_transaction_id", "offers.app_account_token", "offers.application_username", "offers.storekit1_signature",
        "offers.storekit2_jws", "offers.nonce", "offers.redeemed_transaction_id",
        "offer_redemptions.original_transaction_id", "offer_redemptions.transaction_id",
        "offer_codes.original_transaction_id", "offer_codes.code",  // an issued code is a bearer secret: kept as its hash
        "offer_codes.app_account_token",
        "cancel_sheet_decisions.original_transaction_id", "cancel_sheet_decisions.request_identifier",
        "cancel_flow_decisions.original_transaction_id",
        "refund_requests.original_transaction_id", "refund_requests.transaction_id", "refund_requests.body",
        "grants.original_transaction_id", "grants.app_account_token", "grants.idempotency_key", "grants.request_sha256",
        "renewal_extensions.original_transaction_id", "renewal_extensions.app_account_token", "renewal_extensions.idempotency_key",
        "renewal_extensions.request_sha256",
        "app_account_token_updates.original_transaction_id", "app_account_token_updates.app_account_token",  // deleted
        "app_account_token_updates.apple_error",
        "jobs.payload", "jobs.last_error",  // the subscriber's jobs are deleted
        "backfill_transactions.transaction_id", "backfill_transactions.reason",  // deleted
        "backfill_answers.transaction_id", "backfill_answers.original_transaction_id",  // deleted, with Apple's answer
        "rejected_inputs.reason", "reconciliation_runs.error",  // replaced where they quote an identifier
    ]

    /// What one `forget` did, or, for a dry run, would do.
    public struct Outcome: Codable, Sendable, Equatable {
        /// The erasure recorded; nil when there was nothing left to erase and it had been forgotten before, and for
        /// a dry run.
        public var erasureId: UUID?
        /// Subscriptions found and redacted.
        public var subscriptions: Int
        /// Per table, rows redacted or deleted (tables with none left out).
        public var rows: [String: Int]
        /// When it was forgotten before, if it was.
        public var forgottenBefore: String?
        /// The subscriptions the identifier matched (found through either identifier), as they were before.
        public var matched: [Matched] = []
        /// A dry run: nothing was changed or recorded.
        public var dryRun = false

        public struct Matched: Codable, Sendable, Equatable {
            public var bundleId: String
            public var environment: String
            public var originalTransactionId: String
        }
    }

    /// Forgets the subscriber `lookup` names (its environment is ignored: both are forgotten), in one transaction.
    /// Idempotent: a second run finds nothing to redact and records nothing more. A dry run does the same work and
    /// rolls it back: what it matched and the rows it would change, nothing written.
    public static func forget(_ lookup: SubscriberLookup, dryRun: Bool = false, postgres: Database, logger: Logger) async throws -> Outcome {
        do {
            return try await postgres.transaction(logger: logger) { connection in
                var outcome = try await forget(lookup, connection: connection, logger: logger)
                guard dryRun else { return outcome }
                outcome.erasureId = nil
                outcome.dryRun = true
                throw RolledBack(outcome: outcome)
            }
        } catch let rolledBack as RolledBack {
            return rolledBack.outcome
        }
    }

    /// A dry run's way out of its transaction (rolled back), carrying what it found.
    struct RolledBack: Error {
        let outcome: Outcome
    }

    /// Erases in the caller's transaction (an erasure over HTTP records its request in the same one).
    public static func forget(_ lookup: SubscriberLookup, connection: PostgresConnection, logger: Logger) async throws -> Outcome {
        // First, before any row is read or locked: the job transactions in progress end, and no other starts until
        // this one commits (``WorkerBarrier``), so none stores the subscriber again under the erased id.
        try await WorkerBarrier.hold(connection: connection, logger: logger)
        let bundle = lookup.bundleId
        let forgottenBefore = try await forgottenAt(lookup, connection: connection, logger: logger)

        // Both identifiers of every subscription (and grant) of the subscriber, then every transaction id seen.
        var otids = Set(lookup.originalTransactionId.map { [$0] } ?? [])
        var tokens = Set(lookup.appAccountToken.map { [$0] } ?? [])
        let pairs = try await connection.query(
            """
            SELECT original_transaction_id, app_account_token FROM reclaim.subscriptions
            WHERE (original_transaction_id = \(lookup.originalTransactionId)::text OR app_account_token = \(lookup.appAccountToken)::uuid)
              AND (\(bundle)::text IS NULL OR bundle_id = \(bundle))
            UNION
            SELECT original_transaction_id, app_account_token FROM reclaim.grants
            WHERE (original_transaction_id = \(lookup.originalTransactionId)::text OR app_account_token = \(lookup.appAccountToken)::uuid)
              AND (\(bundle)::text IS NULL OR bundle_id = \(bundle))
            """,
            logger: logger
        )
        for try await (otid, token) in pairs.decode((String?, UUID?).self) {
            if let otid { otids.insert(otid) }
            if let token { tokens.insert(token) }
        }
        // What the operator named matched these subscriptions (a token may name several).
        var matched: [Outcome.Matched] = []
        for try await (bundleId, environment, otid) in try await connection.query(
            """
            SELECT bundle_id, environment, original_transaction_id FROM reclaim.subscriptions
            WHERE original_transaction_id = ANY(\(otids.sorted())::text[]) AND (\(bundle)::text IS NULL OR bundle_id = \(bundle))
            ORDER BY bundle_id, environment, original_transaction_id
            """,
            logger: logger
        ).decode((String, String, String).self) {
            matched.append(Outcome.Matched(bundleId: bundleId, environment: environment, originalTransactionId: otid))
        }
        let otidList = otids.sorted()
        let tokenList = tokens.sorted { $0.uuidString < $1.uuidString }
        let transactionRows = try await connection.query(
            """
            SELECT transaction_id FROM reclaim.notifications
            WHERE (original_transaction_id = ANY(\(otidList)::text[]) OR app_account_token = ANY(\(tokenList)::uuid[]))
              AND (\(bundle)::text IS NULL OR bundle_id = \(bundle))
            UNION SELECT last_transaction_id FROM reclaim.subscriptions
            WHERE original_transaction_id = ANY(\(otidList)::text[]) AND (\(bundle)::text IS NULL OR bundle_id = \(bundle))
            UNION SELECT app_transaction_id FROM reclaim.subscriptions
            WHERE original_transaction_id = ANY(\(otidList)::text[]) AND (\(bundle)::text IS NULL OR bundle_id = \(bundle))
            UNION SELECT transaction_id FROM reclaim.refund_requests
            WHERE original_transaction_id = ANY(\(otidList)::text[]) AND (\(bundle)::text IS NULL OR bundle_id = \(bundle))
            UNION SELECT redeemed_transaction_id FROM reclaim.offers
            WHERE original_transaction_id = ANY(\(otidList)::text[]) AND (\(bundle)::text IS NULL OR bundle_id = \(bundle))
            UNION SELECT transaction_id FROM reclaim.offer_redemptions
            WHERE original_transaction_id = ANY(\(otidList)::text[]) AND (\(bundle)::text IS NULL OR bundle_id = \(bundle))
            """,
            logger: logger
        )
        var transactionIds = Set<String>()
        for try await id in transactionRows.decode(String?.self) { if let id { transactionIds.insert(id) } }
        let identifiers = otids.union(transactionIds).union(tokens.map { $0.uuidString.lowercased() }).sorted()
        // As identifiers appear in JSON (jobs' payloads) and in text (reasons, errors); tokens in either case.
        let quoted = identifiers.map { "%\"\($0)\"%" }
        let anywhere = identifiers.map { "%\($0)%" }

        let erasureId = UUID()
        let pseudonyms = otidList.indices.map { "forgotten:\(erasureId.uuidString.lowercased()):\($0 + 1)" }
        let fallback = "forgotten:\(erasureId.uuidString.lowercased()):0"  // a row found by its token alone
        var rows: [String: Int] = [:]
        func run(_ table: String, _ query: PostgresQuery) async throws {
            var count = 0
            for try await _ in try await connection.query(query, logger: logger) { count += 1 }
            if count > 0 { rows[table, default: 0] += count }
        }

        // First the subscriber's queued and done jobs: no batch runs now (``WorkerBarrier``), and a worker that comes later
        // finds its job gone.
        try await run(
            "jobs",
            """
            DELETE FROM reclaim.jobs j
            WHERE j.kind <> \(OutboundStore.forwardJobKind)
              AND (j.notification_uuid IN (
                    SELECT notification_uuid FROM reclaim.notifications
                    WHERE (original_transaction_id = ANY(\(otidList)::text[]) OR app_account_token = ANY(\(tokenList)::uuid[]))
                      AND (\(bundle)::text IS NULL OR bundle_id = \(bundle)))
                OR j.payload::text ILIKE ANY(\(quoted)::text[]))
            RETURNING 1
            """
        )
        // Their forwards, per receiver, while the signed payloads are still there (``settleForwards(of:connection:logger:)``).
        var notificationUUIDs: [UUID] = []
        for try await uuid in try await connection.query(
            """
            SELECT notification_uuid FROM reclaim.notifications
            WHERE (original_transaction_id = ANY(\(otidList)::text[]) OR app_account_token = ANY(\(tokenList)::uuid[]))
              AND (\(bundle)::text IS NULL OR bundle_id = \(bundle))
            """,
            logger: logger
        ).decode(UUID.self) {
            notificationUUIDs.append(uuid)
        }
        let forwardsDropped = try await settleForwards(of: notificationUUIDs, connection: connection, logger: logger)
        if forwardsDropped > 0 { rows["jobs", default: 0] += forwardsDropped }
        try await run(
            "subscriptions",
            """
            UPDATE reclaim.subscriptions t
            SET original_transaction_id = m.p, app_account_token = NULL, last_transaction_id = NULL, app_transaction_id = NULL
            FROM unnest(\(otidList)::text[], \(pseudonyms)::text[]) AS m(o, p)
            WHERE t.original_transaction_id = m.o AND (\(bundle)::text IS NULL OR t.bundle_id = \(bundle))
            RETURNING 1
            """
        )
        let subscriptions = rows["subscriptions"] ?? 0
        try await run(
            "notifications",
            """
            UPDATE reclaim.notifications t
            SET original_transaction_id = CASE WHEN t.original_transaction_id IS NULL THEN NULL
                    ELSE coalesce((SELECT m.p FROM unnest(\(otidList)::text[], \(pseudonyms)::text[]) AS m(o, p) WHERE m.o = t.original_transaction_id), \(fallback)) END,
                transaction_id = NULL, app_account_token = NULL, signed_payload = ''
            WHERE (t.original_transaction_id = ANY(\(otidList)::text[]) OR t.app_account_token = ANY(\(tokenList)::uuid[]))
              AND (\(bundle)::text IS NULL OR t.bundle_id = \(bundle))
            RETURNING 1
            """
        )
        for table in ["campaign_decisions", "offers"] {
            let offerColumns =
                table == "offers"
                ? """
                , application_username = '', storekit1_signature = '', storekit2_jws = '', nonce = gen_random_uuid(),
                  redeemed_transaction_id = NULL,
                  state = CASE WHEN t.state IN ('ready', 'delivered') THEN 'withdrawn' ELSE t.state END,
                  ended_at = CASE WHEN t.state IN ('ready', 'delivered') THEN now() ELSE t.ended_at END,
                  end_reason = CASE WHEN t.state IN ('ready', 'delivered') THEN 'the subscriber was forgotten (reclaim subscribers forget)'
                                    ELSE t.end_reason END
                """ : ""
            try await run(
                table,
                """
                UPDATE reclaim.\(unescaped: table) t
                SET original_transaction_id = coalesce((SELECT m.p FROM unnest(\(otidList)::text[], \(pseudonyms)::text[]) AS m(o, p) WHERE m.o = t.original_transaction_id), \(fallback)),
                    app_account_token = NULL \(unescaped: offerColumns)
                WHERE (t.original_transaction_id = ANY(\(otidList)::text[]) OR t.app_account_token = ANY(\(tokenList)::uuid[]))
                  AND (\(bundle)::text IS NULL OR t.bundle_id = \(bundle))
                RETURNING 1
                """
            )
        }
        for (table, otherColumns) in [
            ("offer_redemptions", ", transaction_id = NULL"),
            // The code stays counted in its pool; as a hash, a second import of it is still refused.
            ("offer_codes", ", code = 'forgotten:' || encode(sha256(convert_to(t.code, 'UTF8')), 'hex'), app_account_token = NULL"),
            ("cancel_sheet_decisions", ", request_identifier = gen_random_uuid()::text"),
            // Pseudonymous, as the cancel sheet's: the save rates keep counting the flow.
            ("cancel_flow_decisions", ""),
            ("refund_requests", ", transaction_id = m.p, body = NULL"),
        ] {
            try await run(
                table,
                """
                UPDATE reclaim.\(unescaped: table) t SET original_transaction_id = m.p \(unescaped: otherColumns)
                FROM unnest(\(otidList)::text[], \(pseudonyms)::text[]) AS m(o, p)
                WHERE t.original_transaction_id = m.o AND (\(bundle)::text IS NULL OR t.bundle_id = \(bundle))
                RETURNING 1
                """
            )
        }
        try await run(
            "grants",
            """
            UPDATE reclaim.grants t
            SET original_transaction_id = CASE WHEN t.original_transaction_id IS NULL THEN NULL
                    ELSE coalesce((SELECT m.p FROM unnest(\(otidList)::text[], \(pseudonyms)::text[]) AS m(o, p) WHERE m.o = t.original_transaction_id), \(fallback)) END,
                app_account_token = NULL, idempotency_key = 'forgotten:' || t.id::text, request_sha256 = NULL
            WHERE (t.original_transaction_id = ANY(\(otidList)::text[]) OR t.app_account_token = ANY(\(tokenList)::uuid[]))
              AND (\(bundle)::text IS NULL OR t.bundle_id = \(bundle))
            RETURNING 1
            """
        )
        try await run(
            "renewal_extensions",
            """
            UPDATE reclaim.renewal_extensions t
            SET original_transaction_id = coalesce(
                    (SELECT m.p FROM unnest(\(otidList)::text[], \(pseudonyms)::text[]) AS m(o, p) WHERE m.o = t.original_transaction_id), \(fallback)),
                app_account_token = NULL, idempotency_key = 'forgotten:' || t.id::text, request_sha256 = NULL,
                -- One not yet sent never is: it would name a pseudonym to Apple.
                status = CASE WHEN t.status = 'pending' THEN 'refused' ELSE t.status END,
                settled_at = CASE WHEN t.status = 'pending' THEN now() ELSE t.settled_at END,
                apple_error = CASE WHEN t.status = 'pending' THEN 'not sent: the subscriber was forgotten' ELSE t.apple_error END
            WHERE (t.original_transaction_id = ANY(\(otidList)::text[]) OR t.app_account_token = ANY(\(tokenList)::uuid[]))
              AND (\(bundle)::text IS NULL OR t.bundle_id = \(bundle))
            RETURNING 1
            """
        )
        // Nothing to keep: a pending one is not sent (its job finds no row), a settled one told Apple a token that
        // Apple keeps on its side.
        try await run(
            "app_account_token_updates",
            """
            DELETE FROM reclaim.app_account_token_updates
            WHERE (original_transaction_id = ANY(\(otidList)::text[]) OR app_account_token = ANY(\(tokenList)::uuid[])
                   OR replaces_token = ANY(\(tokenList)::uuid[]))
              AND (\(bundle)::text IS NULL OR bundle_id = \(bundle))
            RETURNING 1
            """
        )
        // The ids a backfill was given first, while their answers still say whose they are: an id given may be any
        // transaction of the subscriber, one no notification or subscription row names.
        try await run(
            "backfill_transactions",
            """
            DELETE FROM reclaim.backfill_transactions t
            WHERE (t.transaction_id = ANY(\(identifiers)::text[]) OR t.reason ILIKE ANY(\(anywhere)::text[])
                   OR EXISTS (SELECT 1 FROM reclaim.backfill_answers a
                              WHERE a.bundle_id = t.bundle_id AND a.transaction_id = t.transaction_id
                                AND a.original_transaction_id = ANY(\(otidList)::text[])))
              AND (\(bundle)::text IS NULL OR t.bundle_id = \(bundle))
            RETURNING 1
            """
        )
        try await run(
            "backfill_answers",
            """
            DELETE FROM reclaim.backfill_answers
            WHERE (transaction_id = ANY(\(identifiers)::text[]) OR original_transaction_id = ANY(\(otidList)::text[]))
              AND (\(bundle)::text IS NULL OR bundle_id = \(bundle))
            RETURNING 1
            """
        )
        // A parent's withdrawal of consent outlives the erasure (docs/privacy.md: the account never gets a campaign
        // again): its app account is kept as a one-way hash, which a later subscription of the account still matches
        // (``consentKey(_:)``), and the RESCIND_CONSENT notification, which names no transaction, is redacted here.
        var consentNotifications: [UUID] = []
        for try await uuid in try await connection.query(
            """
            UPDATE reclaim.rescinded_consents SET app_transaction_id = \(unescaped: Self.consentKey("app_transaction_id"))
            WHERE app_transaction_id = ANY(\(identifiers)::text[]) AND (\(bundle)::text IS NULL OR bundle_id = \(bundle))
            RETURNING notification_uuid
            """,
            logger: logger
        ).decode(UUID.self) {
            consentNotifications.append(uuid)
        }
        if !consentNotifications.isEmpty {
            rows["rescinded_consents", default: 0] += consentNotifications.count
            let dropped = try await settleForwards(of: consentNotifications, connection: connection, logger: logger)
            if dropped > 0 { rows["jobs", default: 0] += dropped }
            try await run(
                "notifications",
                """
                UPDATE reclaim.notifications
                SET original_transaction_id = NULL, transaction_id = NULL, app_account_token = NULL, signed_payload = ''
                WHERE notification_uuid = ANY(\(consentNotifications)) AND signed_payload <> ''
                RETURNING 1
                """
            )
        }
        try await run(
            "rejected_inputs",
            "UPDATE reclaim.rejected_inputs SET reason = 'redacted: it named a forgotten subscriber' WHERE reason ILIKE ANY(\(anywhere)::text[]) RETURNING 1"
        )
        try await run(
            "reconciliation_runs",
            "UPDATE reclaim.reconciliation_runs SET error = 'redacted: it named a forgotten subscriber' WHERE error ILIKE ANY(\(anywhere)::text[]) RETURNING 1"
        )
        // The webhooks the offers' withdrawal just queued (offer.withdrawn, by trigger) are not sent either.
        try await run(
            "jobs",
            """
            DELETE FROM reclaim.jobs WHERE target IS NOT NULL AND state IN ('available', 'retryable')
              AND payload::text LIKE ANY(\(pseudonyms.map { "%\"\($0)\"%" } + ["%\"\(fallback)\"%"])::text[])
            RETURNING 1
            """
        )

        if rows.isEmpty, let forgottenBefore {
            return Outcome(erasureId: nil, subscriptions: 0, rows: [:], forgottenBefore: forgottenBefore, matched: matched)
        }
        let counts = String(decoding: try JSONEncoder().encode(rows), as: UTF8.self)
        try await connection.query(
            """
            INSERT INTO reclaim.erasures (id, bundle_id, subscriptions, rows) VALUES (\(erasureId), \(bundle), \(subscriptions), \(counts)::jsonb)
            """,
            logger: logger
        )
        try await connection.query(
            """
            INSERT INTO reclaim.forgotten_subscribers (kind, sha256, bundle_id, erasure_id)
            SELECT 'original_transaction_id', reclaim.forgotten_hash('original_transaction_id', o), coalesce(\(bundle), ''), \(erasureId)
            FROM unnest(\(otidList)::text[]) AS o
            UNION ALL
            SELECT 'app_account_token', reclaim.forgotten_hash('app_account_token', t::text), coalesce(\(bundle), ''), \(erasureId)
            FROM unnest(\(tokenList)::uuid[]) AS t
            ON CONFLICT DO NOTHING
            """,
            logger: logger
        )
        return Outcome(erasureId: erasureId, subscriptions: subscriptions, rows: rows, forgottenBefore: forgottenBefore, matched: matched)
    }
}
