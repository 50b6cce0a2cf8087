import Foundation
import Logging
import PostgresNIO
import ReclaimDomain

/// Every statement on `reclaim.offer_code_pools` and `reclaim.offer_codes` (``OfferCodes``). The worker's run on the
/// job's connection, in its transaction; the import and the status on a connection of their own.
public enum OfferCodeStore {
    /// A pool: one offer-code offer of one app and environment.
    public struct Pool: Sendable, Equatable {
        public var bundleId: String
        public var environment: String
        /// The offer's reference name in App Store Connect.
        public var offer: String
        public var productId: String
        public var eligibility: [OfferCodes.Eligibility]
        /// With `{code}` for the code.
        public var redemptionURL: String

        public init(
            bundleId: String,
            environment: String,
            offer: String,
            productId: String,
            eligibility: [OfferCodes.Eligibility],
            redemptionURL: String
        ) {
            self.bundleId = bundleId
            self.environment = environment
            self.offer = offer
            self.productId = productId
            self.eligibility = eligibility
            self.redemptionURL = redemptionURL
        }
    }

    /// What an import did.
    public struct Imported: Sendable, Equatable, Codable {
        /// Codes new to the pool.
        public var added: Int
        /// Codes the pool already had (an import run again).
        public var alreadyInPool: Int
    }

    /// Refused: the file's codes overlap another pool's, or the pool exists with other settings. Names no code.
    public struct ImportRefused: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// Imports `codes` into `pool` (created on its first import), each expiring at `expiresAt`, in one transaction.
    /// Idempotent: codes the pool has are counted, not changed. Refused, with nothing written, when a code belongs to
    /// another pool (or was issued and its subscriber forgotten), or when the pool exists with another product,
    /// eligibility or redemption URL.
    public static func importCodes(
        _ codes: [String],
        into pool: Pool,
        expiresAt: Date,
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> Imported {
        let eligibility = pool.eligibility.map(\.rawValue)
        var existing: Pool?
        for try await (product, kinds, url) in try await connection.query(
            """
            INSERT INTO reclaim.offer_code_pools (bundle_id, environment, offer_reference_name, product_id, eligibility, redemption_url)
            VALUES (\(pool.bundleId), \(pool.environment), \(pool.offer), \(pool.productId), \(eligibility)::text[], \(pool.redemptionURL))
            ON CONFLICT (bundle_id, environment, offer_reference_name) DO UPDATE SET product_id = reclaim.offer_code_pools.product_id
            RETURNING product_id, eligibility, redemption_url
            """,
            logger: logger
        ).decode((String, [String], String).self) {
            existing = Pool(
                bundleId: pool.bundleId,
                environment: pool.environment,
                offer: pool.offer,
                productId: product,
                eligibility: kinds.compactMap(OfferCodes.Eligibility.init(rawValue:)),
                redemptionURL: url
            )
        }
        if let existing, existing != pool {
            throw ImportRefused(
                description:
                    "the pool of \(pool.offer) (\(pool.bundleId), \(pool.environment)) exists with product \(existing.productId), eligibility "
                    + "\(existing.eligibility.map(\.rawValue).joined(separator: ",")) and redemption URL \(existing.redemptionURL): import with the same settings"
            )
        }
        // Elsewhere: in another pool, or issued and since forgotten (kept as its hash).
        let clash = try await connection.query(
            """
            SELECT c.bundle_id, c.environment, c.offer_reference_name, count(*)
            FROM reclaim.offer_codes c
            WHERE (c.code = ANY(\(codes)::text[])
                   AND (c.bundle_id, c.environment, c.offer_reference_name) <> (\(pool.bundleId), \(pool.environment), \(pool.offer)))
               OR c.code = ANY(SELECT 'forgotten:' || encode(sha256(convert_to(x, 'UTF8')), 'hex') FROM unnest(\(codes)::text[]) AS x)
            GROUP BY 1, 2, 3
            """,
            logger: logger
        )
        var elsewhere: [String] = []
        for try await (bundle, environment, offer, count) in clash.decode((String, String, String, Int).self) {
            elsewhere.append("\(count) in the pool of \(offer) (\(bundle), \(environment))")
        }
        if !elsewhere.isEmpty {
            throw ImportRefused(
                description:
                    "refused, nothing imported: codes of this file are already imported elsewhere: \(elsewhere.sorted().joined(separator: "; ")). A code belongs to one offer"
            )
        }
        var added = 0
        for try await _ in try await connection.query(
            """
            INSERT INTO reclaim.offer_codes (code, bundle_id, environment, offer_reference_name, expires_at)
            SELECT x, \(pool.bundleId), \(pool.environment), \(pool.offer), \(expiresAt) FROM unnest(\(codes)::text[]) AS x
            ON CONFLICT (code) DO NOTHING
            RETURNING 1
            """,
            logger: logger
        ) {
            added += 1
        }
        return Imported(added: added, alreadyInPool: codes.count - added)
    }

    /// A pool now (`reclaim.offer_code_pool_status`).
    public struct Status: Sendable, Equatable, Codable {
        public var bundleId: String
        public var environment: String
        public var offer: String
        public var productId: String
        public var eligibility: [String]
        public var unused: Int
        public var issued: Int
        public var redeemed: Int
        public var expired: Int
        /// When the first unused code expires.
        public var nextExpiry: Date?
        /// Subscribers who redeemed the offer though Reclaim gave them none of its codes.
        public var redeemedWithoutCode: Int
    }

    public static func status(connection: PostgresConnection, logger: Logger) async throws -> [Status] {
        var pools: [Status] = []
        for try await row in try await connection.query(
            """
            SELECT bundle_id, environment, offer_reference_name, product_id, eligibility, unused, issued, redeemed, expired,
                   next_expiry, redeemed_without_code
            FROM reclaim.offer_code_pool_status ORDER BY bundle_id, environment, offer_reference_name
            """,
            logger: logger
        ).decode((String, String, String, String, [String], Int, Int, Int, Int, Date?, Int).self) {
            pools.append(
                Status(
                    bundleId: row.0,
                    environment: row.1,
                    offer: row.2,
                    productId: row.3,
                    eligibility: row.4,
                    unused: row.5,
                    issued: row.6,
                    redeemed: row.7,
                    expired: row.8,
                    nextExpiry: row.9,
                    redeemedWithoutCode: row.10
                )
            )
        }
        return pools
    }

    /// Each pool's unused codes valid now, and of those the ones valid `validFor` from now (the workers' gauges).
    public static func unusedCounts(
        validFor: TimeInterval,
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> [(bundleId: String, environment: String, offer: String, unused: Int, validLater: Int)] {
        var pools: [(bundleId: String, environment: String, offer: String, unused: Int, validLater: Int)] = []
        for try await row in try await connection.query(
            """
            SELECT p.bundle_id, p.environment, p.offer_reference_name,
                   count(c.code) FILTER (WHERE c.expires_at > now()),
                   count(c.code) FILTER (WHERE c.expires_at > now() + make_interval(secs => \(Int(validFor))))
            FROM reclaim.offer_code_pools p
            LEFT JOIN reclaim.offer_codes c
              ON c.bundle_id = p.bundle_id AND c.environment = p.environment AND c.offer_reference_name = p.offer_reference_name
             AND c.decision_id IS NULL
            GROUP BY 1, 2, 3
            """,
            logger: logger
        ).decode((String, String, String, Int, Int).self) {
            pools.append((row.0, row.1, row.2, row.3, row.4))
        }
        return pools
    }

    /// The pools as `reclaim campaigns check` compares them with the campaigns.
    public static func pools(connection: PostgresConnection, logger: Logger) async throws -> [Pool] {
        var pools: [Pool] = []
        for try await row in try await connection.query(
            """
            SELECT bundle_id, environment, offer_reference_name, product_id, eligibility, redemption_url FROM reclaim.offer_code_pools
            """,
            logger: logger
        ).decode((String, String, String, String, [String], String).self) {
            pools.append(
                Pool(
                    bundleId: row.0,
                    environment: row.1,
                    offer: row.2,
                    productId: row.3,
                    eligibility: row.4.compactMap(OfferCodes.Eligibility.init(rawValue:)),
                    redemptionURL: row.5
                )
            )
        }
        return pools
    }

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

    /// A code as the app is handed it (`GET /v1/offers?include=offerCodes`).
    public struct DeliveredCode: Sendable, Equatable {
        /// The decision that issued it: the id the app records events with.
        public var id: UUID
        public var campaignId: String
        public var environment: String
        public var productId: String
        /// The offer's reference name.
        public var offer: String
        public var code: String
        public var redemptionURL: String
        /// The earlier of the code's expiry and the decision's delivery window.
        public var expiresAt: Date
    }

    /// Whose codes: an app user by token, or a proven subscription.
    public enum Recipient: Sendable {
        case appUser(bundleId: String, appAccountToken: UUID)
        case subscription(SubscriberKey)
    }

    /// The recipient's codes that are issued, not redeemed, unexpired and inside their decision's delivery window, of
    /// campaigns not paused; marked delivered (first time) in the same statement.
    public static func deliver(to recipient: Recipient, connection: PostgresConnection, logger: Logger) async throws -> [DeliveredCode] {
        let (bundleId, token, environment, originalTransactionId): (String, UUID?, String?, String?) =
            switch recipient {
            case .appUser(let bundleId, let token): (bundleId, token, nil, nil)
            case .subscription(let key): (key.bundleId, nil, key.environment, key.originalTransactionId)
            }
        var codes: [DeliveredCode] = []
        for try await row in try await connection.query(
            """
            UPDATE reclaim.offer_codes c SET delivered_at = coalesce(c.delivered_at, now())
            FROM reclaim.campaign_decisions d, reclaim.offer_code_pools p
            WHERE d.id = c.decision_id
              AND p.bundle_id = c.bundle_id AND p.environment = c.environment AND p.offer_reference_name = c.offer_reference_name
              AND c.bundle_id = \(bundleId) AND c.decision_id IS NOT NULL AND c.redeemed_at IS NULL
              AND (\(token)::uuid IS NULL OR c.app_account_token = \(token))
              AND (\(originalTransactionId)::text IS NULL OR (c.environment = \(environment) AND c.original_transaction_id = \(originalTransactionId)))
              AND c.expires_at > now() AND c.deliverable_until > now()
              AND NOT EXISTS (SELECT 1 FROM reclaim.campaigns k WHERE k.id = d.campaign_id AND k.paused_at IS NOT NULL)
            RETURNING d.id, d.campaign_id, c.environment, p.product_id, c.offer_reference_name, c.code, p.redemption_url,
                      least(c.expires_at, c.deliverable_until)
            """,
            logger: logger
        ).decode((UUID, String, String, String, String, String, String, Date).self) {
            codes.append(
                DeliveredCode(
                    id: row.0,
                    campaignId: row.1,
                    environment: row.2,
                    productId: row.3,
                    offer: row.4,
                    code: row.5,
                    redemptionURL: OfferCodes.redemptionURL(template: row.6, code: row.5),
                    expiresAt: row.7
                )
            )
        }
        return codes.sorted { $0.expiresAt < $1.expiresAt }
    }

    /// The codes issued to one subscriber, for their story (codes are bearer secrets: the story is for admins).
    public struct IssuedCode: Sendable, Equatable, Codable {
        public var code: String
        public var offer: String
        public var campaignId: String
        public var issuedAt: Date
        public var expiresAt: Date
        public var redeemedAt: Date?
    }

    public static func issued(to subscriber: SubscriberKey, connection: PostgresConnection, logger: Logger) async throws -> [IssuedCode] {
        var codes: [IssuedCode] = []
        for try await row in try await connection.query(
            """
            SELECT c.code, c.offer_reference_name, d.campaign_id, c.issued_at, c.expires_at, c.redeemed_at
            FROM reclaim.offer_codes c JOIN reclaim.campaign_decisions d ON d.id = c.decision_id
            WHERE c.bundle_id = \(subscriber.bundleId) AND c.environment = \(subscriber.environment)
              AND c.original_transaction_id = \(subscriber.originalTransactionId)
            ORDER BY c.issued_at
            """,
            logger: logger
        ).decode((String, String, String, Date, Date, Date?).self) {
            codes.append(IssuedCode(code: row.0, offer: row.1, campaignId: row.2, issuedAt: row.3, expiresAt: row.4, redeemedAt: row.5))
        }
        return codes
    }
}
