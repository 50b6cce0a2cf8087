import Foundation
import Logging
import PostgresNIO
import ReclaimDomain

/// What the worker asks of the pools in the job's transaction: which codes a subscriber can be given, one code per
/// offered decision, and a redemption marked on the code it redeems.
extension OfferCodeStore {
    /// The offer codes each subscriber can be given, in one statement: the offers among `offers` (per app, each
    /// with the validity a code needs) whose pool in the subscriber's environment has an unused code valid that long,
    /// and the offers the subscriber was given a code of or redeemed (`offerType` 3).
    public static func contexts(
        of subscribers: [SubscriberKey],
        offers: [(bundleId: String, offer: String, validFor: TimeInterval)],
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> [SubscriberKey: OfferCodes.Context] {
        guard !subscribers.isEmpty, !offers.isEmpty else { return [:] }
        let rows = try await connection.query(
            """
            WITH wanted AS (
                SELECT * FROM unnest(\(offers.map(\.bundleId))::text[], \(offers.map(\.offer))::text[], \(offers.map { Int($0.validFor) })::bigint[])
                    AS w(bundle_id, offer, valid_for)),
            who AS (
                SELECT * FROM unnest(\(subscribers.map(\.bundleId))::text[], \(subscribers.map(\.environment))::text[],
                                     \(subscribers.map(\.originalTransactionId))::text[]) AS s(bundle_id, environment, original_transaction_id))
            SELECT 'available', p.bundle_id, p.environment, p.offer_reference_name, ''
            FROM reclaim.offer_code_pools p JOIN wanted w ON w.bundle_id = p.bundle_id AND w.offer = p.offer_reference_name
            WHERE p.environment IN (SELECT environment FROM who WHERE who.bundle_id = p.bundle_id)
              AND EXISTS (SELECT 1 FROM reclaim.offer_codes c
                          WHERE c.bundle_id = p.bundle_id AND c.environment = p.environment AND c.offer_reference_name = p.offer_reference_name
                            AND c.decision_id IS NULL AND c.expires_at > now() + make_interval(secs => w.valid_for))
            UNION ALL
            SELECT 'given', c.bundle_id, c.environment, c.offer_reference_name, c.original_transaction_id
            FROM who JOIN reclaim.offer_codes c
              ON c.bundle_id = who.bundle_id AND c.environment = who.environment AND c.original_transaction_id = who.original_transaction_id
            WHERE c.decision_id IS NOT NULL
            UNION ALL
            SELECT 'given', r.bundle_id, r.environment, r.offer_identifier, r.original_transaction_id
            FROM who JOIN reclaim.offer_redemptions r
              ON r.bundle_id = who.bundle_id AND r.environment = who.environment AND r.original_transaction_id = who.original_transaction_id
            WHERE r.offer_type = \(Int16(OfferCodes.offerType))
            """,
            logger: logger
        )
        var available: [String: Set<String>] = [:]
        var given: [SubscriberKey: Set<String>] = [:]
        for try await (kind, bundle, environment, offer, subscriber) in rows.decode((String, String, String, String, String).self) {
            if kind == "available" {
                available["\(bundle)\u{0}\(environment)", default: []].insert(offer)
            } else {
                given[SubscriberKey(bundleId: bundle, environment: environment, originalTransactionId: subscriber), default: []].insert(offer)
            }
        }
        var contexts: [SubscriberKey: OfferCodes.Context] = [:]
        for key in subscribers {
            contexts[key] = OfferCodes.Context(
                available: available["\(key.bundleId)\u{0}\(key.environment)"] ?? [],
                given: given[key] ?? []
            )
        }
        return contexts
    }

    /// A code an offered decision asks for.
    public struct Claim: Sendable {
        public var decisionId: UUID
        public var subscriber: SubscriberKey
        public var offer: String
        /// The code must stay valid past this (the decision's deliverable-until).
        public var validThrough: Date

        public init(decisionId: UUID, subscriber: SubscriberKey, offer: String, validThrough: Date) {
            self.decisionId = decisionId
            self.subscriber = subscriber
            self.offer = offer
            self.validThrough = validThrough
        }
    }

    /// Issues one unused code to each claim's decision (the one that expires first among those valid long enough), in
    /// the job's transaction; the trigger queues its `offer.issued` webhook. A decision the job's persist did not
    /// write (a notification decided before) takes none. Rows another transaction is issuing are skipped, never waited
    /// for, so concurrent workers never take one code twice. Returns the claims that found no code (the pool ran dry
    /// meanwhile, or the subscriber was given one of the offer in the meantime): their decisions are turned to
    /// skipped with the reason.
    public static func issue(_ claims: [Claim], connection: PostgresConnection, logger: Logger) async throws -> [Claim] {
        var unserved: [Claim] = []
        for claim in claims {
            var issued = false
            for try await _ in try await connection.query(
                """
                UPDATE reclaim.offer_codes SET decision_id = \(claim.decisionId), original_transaction_id = \(claim.subscriber.originalTransactionId),
                    issued_at = now(), deliverable_until = \(claim.validThrough),
                    app_account_token = (SELECT app_account_token FROM reclaim.campaign_decisions WHERE id = \(claim.decisionId))
                WHERE code = (
                    SELECT code FROM reclaim.offer_codes
                    WHERE bundle_id = \(claim.subscriber.bundleId) AND environment = \(claim.subscriber.environment)
                      AND offer_reference_name = \(claim.offer) AND decision_id IS NULL AND expires_at > \(claim.validThrough)
                    ORDER BY expires_at LIMIT 1 FOR UPDATE SKIP LOCKED)
                  -- Rechecked on the row as it is once locked: a code never changes hands.
                  AND decision_id IS NULL
                  AND EXISTS (SELECT 1 FROM reclaim.campaign_decisions WHERE id = \(claim.decisionId) AND outcome = 'offered')
                  AND NOT EXISTS (SELECT 1 FROM reclaim.offer_codes g
                                  WHERE g.bundle_id = \(claim.subscriber.bundleId) AND g.environment = \(claim.subscriber.environment)
                                    AND g.original_transaction_id = \(claim.subscriber.originalTransactionId)
                                    AND g.offer_reference_name = \(claim.offer) AND g.decision_id IS NOT NULL)
                RETURNING 1
                """,
                logger: logger
            ) {
                issued = true
            }
            if !issued { unserved.append(claim) }
        }
        guard !unserved.isEmpty else { return [] }
        // Only decisions this job wrote and that offered (a replayed decision was never written by it).
        var skipped: [Claim] = []
        for try await id in try await connection.query(
            """
            UPDATE reclaim.campaign_decisions d SET outcome = 'skipped', variant_id = NULL,
                reason = 'no code left: the pool of ' || m.offer || ' ran dry, or the subscriber was given a code of it, while deciding'
            FROM unnest(\(unserved.map(\.decisionId))::uuid[], \(unserved.map(\.offer))::text[]) AS m(id, offer)
            WHERE d.id = m.id AND d.outcome = 'offered'
              AND NOT EXISTS (SELECT 1 FROM reclaim.offer_codes c WHERE c.decision_id = d.id)
            RETURNING d.id
            """,
            logger: logger
        ).decode(UUID.self) {
            if let claim = unserved.first(where: { $0.decisionId == id }) { skipped.append(claim) }
        }
        return skipped
    }

    /// A redemption of an offer code (`offerType` 3): the code of that offer issued to this subscriber is marked
    /// redeemed, and the redemption row names its decision. Inferred: Apple's transaction names the offer (its reference
    /// name), not the code; Reclaim gives a subscriber at most one code per offer. A pay-as-you-go offer's later
    /// renewals name the decision too; the code keeps its first redemption.
    public static func recordRedemption(
        offer: String,
        redeemedAt: Date,
        subscriber: SubscriberKey,
        notificationUUID: UUID,
        connection: PostgresConnection,
        logger: Logger
    ) async throws {
        try await connection.query(
            """
            WITH code AS (
                SELECT code, decision_id FROM reclaim.offer_codes
                WHERE bundle_id = \(subscriber.bundleId) AND environment = \(subscriber.environment)
                  AND original_transaction_id = \(subscriber.originalTransactionId) AND offer_reference_name = \(offer)
                  AND decision_id IS NOT NULL
                ORDER BY issued_at DESC LIMIT 1),
            marked AS (
                UPDATE reclaim.offer_codes c SET redeemed_at = \(redeemedAt), redemption_notification_uuid = \(notificationUUID)
                FROM code WHERE c.code = code.code AND c.redeemed_at IS NULL
                RETURNING 1)
            UPDATE reclaim.offer_redemptions r SET code_decision_id = code.decision_id
            FROM code WHERE r.notification_uuid = \(notificationUUID)
            """,
            logger: logger
        )
    }
}
