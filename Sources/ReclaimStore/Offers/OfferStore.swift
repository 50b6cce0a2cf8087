import Foundation
import Logging
import PostgresNIO
import ReclaimDomain

/// Every statement on `reclaim.offers` (with `reclaim.offer_redemptions` and `reclaim.offer_events`), but its one
/// INSERT, ``OfferInsert``, which the campaign persist and the grant insert embed. Every function runs on the
/// caller's connection, inside the caller's transaction (a job's, a delivery's, a refresh's).
public enum OfferStore {
    /// Withdraws live offers, each with its reason, in one statement; returns how many were live.
    @discardableResult
    public static func withdraw(_ withdrawals: [(offerId: UUID, reason: String)], connection: PostgresConnection, logger: Logger) async throws -> Int
    {
        guard !withdrawals.isEmpty else { return 0 }
        let rows = try await connection.query(
            """
            -- id = ANY(…) reads the primary key; a join with unnest(…) was planned as a scan of the whole table.
            UPDATE reclaim.offers AS o SET state = 'withdrawn', ended_at = now(),
                end_reason = (\(withdrawals.map(\.reason))::text[])[array_position(\(withdrawals.map(\.offerId))::uuid[], o.id)]
            WHERE o.id = ANY(\(withdrawals.map(\.offerId))::uuid[]) AND o.state IN ('ready', 'delivered')
            RETURNING 1
            """,
            logger: logger
        )
        var count = 0
        for try await _ in rows { count += 1 }
        return count
    }

    /// Ends a live offer as withdrawn; false when it was no longer live.
    @discardableResult
    public static func withdraw(_ offerId: UUID, reason: String, connection: PostgresConnection, logger: Logger) async throws -> Bool {
        try await withdraw([(offerId, reason)], connection: connection, logger: logger) > 0
    }

    /// Records a promotional-offer purchase (once per notification) and marks the offer it redeems.
    public static func recordRedemption(
        _ redemption: OfferLifecycle.Redemption,
        subscriber: SubscriberKey,
        notificationUUID: UUID,
        connection: PostgresConnection,
        logger: Logger
    ) async throws {
        try await connection.query(
            """
            INSERT INTO reclaim.offer_redemptions (
                notification_uuid, bundle_id, environment, original_transaction_id, transaction_id, product_id,
                offer_identifier, offer_id, price, currency, redeemed_at, offer_type, offer_period)
            VALUES (
                \(notificationUUID), \(subscriber.bundleId), \(subscriber.environment), \(subscriber.originalTransactionId),
                \(redemption.transactionId), \(redemption.productId), \(redemption.offerIdentifier), \(redemption.offerId),
                \(redemption.price), \(redemption.currency), \(redemption.redeemedAt), \(Int16(clamping: redemption.offerType)),
                \(redemption.offerPeriod))
            ON CONFLICT (notification_uuid) DO NOTHING
            """,
            logger: logger
        )
        if redemption.offerType == OfferCodes.offerType {
            try await OfferCodeStore.recordRedemption(
                offer: redemption.offerIdentifier,
                redeemedAt: redemption.redeemedAt,
                subscriber: subscriber,
                notificationUUID: notificationUUID,
                connection: connection,
                logger: logger
            )
        }
        guard let offerId = redemption.offerId else { return }
        try await connection.query(
            """
            UPDATE reclaim.offers SET state = 'redeemed', ended_at = now(), redeemed_at = \(redemption.redeemedAt),
                redeemed_transaction_id = \(redemption.transactionId), redeemed_price = \(redemption.price),
                redeemed_currency = \(redemption.currency)
            WHERE id = \(offerId) AND state IN ('ready', 'delivered')
            """,
            logger: logger
        )
    }

    /// The subscriber's discounted redemptions through every door, for the app's ``DiscountBudget``.
    public static func discounts(
        of subscriber: SubscriberKey,
        connection: PostgresConnection,
        logger: Logger
    ) async throws
        -> [DiscountBudget.Spent]
    {
        let rows = try await connection.query(
            """
            SELECT redeemed_at, offer_type || '/' || offer_identifier FROM reclaim.offer_redemptions
            WHERE bundle_id = \(subscriber.bundleId) AND environment = \(subscriber.environment)
              AND original_transaction_id = \(subscriber.originalTransactionId)
            """,
            logger: logger
        )
        var spent: [DiscountBudget.Spent] = []
        for try await (at, offer) in rows.decode((Date, String).self) { spent.append(.init(at: at, offer: offer)) }
        return spent
    }

    /// The deliverable offers of one app user, locked for the caller's delivery transaction.
    public static func lockDeliverable(
        bundleId: String,
        appAccountToken: UUID,
        connection: PostgresConnection,
        logger: Logger
    ) async throws
        -> [StoredOffer]
    {
        try await select(
            """
            WHERE bundle_id = \(bundleId) AND app_account_token = \(appAccountToken) AND state IN ('ready', 'delivered')
              AND deliverable_until > now() \(unescaped: Self.campaignNotPaused)
            ORDER BY priority DESC, created_at
            FOR UPDATE
            """,
            connection: connection,
            logger: logger
        )
    }

    /// The deliverable offers of one subscription (an app user found by an Apple-signed transaction rather than by
    /// an appAccountToken), locked for the caller's delivery transaction. Reads `offers_one_live_idx`.
    public static func lockDeliverable(subscriber: SubscriberKey, connection: PostgresConnection, logger: Logger) async throws -> [StoredOffer] {
        try await select(
            """
            WHERE bundle_id = \(subscriber.bundleId) AND environment = \(subscriber.environment)
              AND original_transaction_id = \(subscriber.originalTransactionId) AND state IN ('ready', 'delivered')
              AND deliverable_until > now() \(unescaped: Self.campaignNotPaused)
            ORDER BY priority DESC, created_at
            FOR UPDATE
            """,
            connection: connection,
            logger: logger
        )
    }

    /// Whether the app user has any deliverable offer: the cheap first look of a delivery, without a transaction.
    /// The NOTIFY channel of new live offers: `o <bundle id> <appAccountToken>` (schema.sql, notify_live_offer).
    public static let liveOffersChannel = "reclaim_offers"

    /// The app user a `liveOffersChannel` payload names.
    public static func liveOfferKey(_ payload: String) -> (bundleId: String, appAccountToken: UUID)? {
        let parts = payload.split(separator: " ")
        guard parts.count == 3, parts[0] == "o", let token = UUID(uuidString: String(parts[2])) else { return nil }
        return (String(parts[1]), token)
    }

    /// Every app user with a live offer (an index-only read of offers_deliverable_idx).
    public static func liveOfferOwners(connection: PostgresConnection, logger: Logger) async throws -> [(String, UUID)] {
        let rows = try await connection.query(
            "SELECT bundle_id, app_account_token FROM reclaim.offers WHERE state IN ('ready', 'delivered') AND app_account_token IS NOT NULL",
            logger: logger
        )
        var owners: [(String, UUID)] = []
        for try await (bundle, token) in rows.decode((String, UUID).self) { owners.append((bundle, token)) }
        return owners
    }

    public static func hasDeliverable(bundleId: String, appAccountToken: UUID, connection: PostgresConnection, logger: Logger) async throws -> Bool {
        try await !connection.run(HasDeliverableStatement(bundleId: bundleId, appAccountToken: appAccountToken), logger: logger).isEmpty
    }

    /// Records a delivery of `offer` (whose signatures may just have been replaced): its signatures are now handed out.
    public static func markDelivered(_ offer: StoredOffer, connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            UPDATE reclaim.offers SET state = 'delivered', delivered_at = coalesce(delivered_at, now()),
                delivery_count = delivery_count + 1, signature_delivered = true,
                key_id = \(offer.keyId), nonce = \(offer.nonce), signed_at = \(offer.signedAt),
                application_username = \(offer.applicationUsername), storekit1_signature = \(offer.storeKit1Signature),
                storekit2_jws = \(offer.storeKit2JWS)
            WHERE id = \(offer.id)
            """,
            logger: logger
        )
    }

    /// Up to `limit` live offers whose signatures were made before `signedBefore`, oldest first, locked and
    /// skipping offers another refresher or a delivery holds. Reads `offers_refresh_idx` in order: no scan.
    public static func lockDueForResigning(
        signedBefore: Date,
        limit: Int,
        connection: PostgresConnection,
        logger: Logger
    ) async throws
        -> [StoredOffer]
    {
        try await select(
            """
            WHERE state IN ('ready', 'delivered') AND signed_at < \(signedBefore) AND deliverable_until > now()
            ORDER BY signed_at
            LIMIT \(limit)
            FOR UPDATE SKIP LOCKED
            """,
            connection: connection,
            logger: logger
        )
    }

    /// Stores new, not yet handed out signatures for `offer`.
    public static func saveSignatures(_ offer: StoredOffer, connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            UPDATE reclaim.offers SET key_id = \(offer.keyId), nonce = \(offer.nonce), signed_at = \(offer.signedAt),
                application_username = \(offer.applicationUsername), storekit1_signature = \(offer.storeKit1Signature),
                storekit2_jws = \(offer.storeKit2JWS), signature_delivered = false
            WHERE id = \(offer.id)
            """,
            logger: logger
        )
    }

    /// Ends the offer of `subscriber` whose delivery window closed but which the expiry sweep has not ended yet
    /// (it runs every `offers.refreshInterval`): such an offer is no longer deliverable, yet `offers_one_live_idx`
    /// still counts it, so a new offer for the subscriber could not be stored until the sweep. Returns how many.
    @discardableResult
    public static func expireLapsed(of subscriber: SubscriberKey, connection: PostgresConnection, logger: Logger) async throws -> Int {
        let rows = try await connection.query(
            """
            UPDATE reclaim.offers SET state = 'expired', ended_at = now(), end_reason = 'deliverable_until passed'
            WHERE bundle_id = \(subscriber.bundleId) AND environment = \(subscriber.environment)
              AND original_transaction_id = \(subscriber.originalTransactionId) AND state IN ('ready', 'delivered')
              AND deliverable_until <= now()
            RETURNING 1
            """,
            logger: logger
        )
        var count = 0
        for try await _ in rows { count += 1 }
        return count
    }

    /// Ends up to `limit` live offers whose delivery window closed; returns how many. Reads `offers_expiry_idx`.
    public static func expire(limit: Int, connection: PostgresConnection, logger: Logger) async throws -> Int {
        let rows = try await connection.query(
            """
            UPDATE reclaim.offers SET state = 'expired', ended_at = now(), end_reason = 'deliverable_until passed'
            WHERE id IN (
                SELECT id FROM reclaim.offers
                WHERE state IN ('ready', 'delivered') AND deliverable_until <= now()
                ORDER BY deliverable_until LIMIT \(limit)
                FOR UPDATE SKIP LOCKED)
            RETURNING 1
            """,
            logger: logger
        )
        var count = 0
        for try await _ in rows { count += 1 }
        return count
    }

    private static func select(_ tail: PostgresQuery, connection: PostgresConnection, logger: Logger) async throws -> [StoredOffer] {
        try await select(tail, extraColumn: nil, connection: connection, logger: logger).map(\.offer)
    }

    /// The one decoder of an offer row; `extraColumn`, an SQL expression over the row (`offers.…`), is read after
    /// the offer's own columns.
    private static func select(
        _ tail: PostgresQuery,
        extraColumn: String?,
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> [(offer: StoredOffer, extra: PostgresCell?)] {
        var query = PostgresQuery(
            unsafeSQL: """
                SELECT id, campaign_id, bundle_id, environment, original_transaction_id, app_account_token, product_id,
                       offer_identifier, key_id, nonce, signed_at, application_username, storekit1_signature, storekit2_jws,
                       signature_delivered, deliverable_until\(extraColumn.map { ", \($0)" } ?? "")
                FROM reclaim.offers 
                """
        )
        query.sql += tail.sql
        query.binds = tail.binds
        let rows = try await connection.query(query, logger: logger)
        var offers: [(offer: StoredOffer, extra: PostgresCell?)] = []
        for try await row in rows {
            let r = try row.decode(
                (UUID, String, String, String, String, UUID?, String, String, String, UUID, Date, String, String, String, Bool, Date).self
            )
            offers.append(
                (
                    StoredOffer(
                        id: r.0,
                        campaignId: r.1,
                        bundleId: r.2,
                        environment: r.3,
                        originalTransactionId: r.4,
                        appAccountToken: r.5,
                        productId: r.6,
                        offerIdentifier: r.7,
                        keyId: r.8,
                        nonce: r.9,
                        signedAt: r.10,
                        applicationUsername: r.11,
                        storeKit1Signature: r.12,
                        storeKit2JWS: r.13,
                        signatureDelivered: r.14,
                        deliverableUntil: r.15
                    ),
                    extraColumn == nil ? nil : row.makeRandomAccess()[16]
                )
            )
        }
        return offers
    }

    /// What recording an app's event about an offer did.
    public enum EventOutcome: String, Sendable {
        case recorded, duplicate
        /// No such offer for this app: the same answer for another app's offer and an unknown id.
        case unknownOffer
    }

    /// Records `event` for an offer of `bundleId`, once per offer and event, with `error` for purchase_failed (the first
    /// failure's error is kept).
    public static func recordEvent(
        _ event: String,
        error: String? = nil,
        offerId: UUID,
        bundleId: String,
        connection: PostgresConnection,
        logger: Logger
    ) async throws
        -> EventOutcome
    {
        let rows = try await connection.query(
            """
            WITH offer AS (SELECT id FROM reclaim.offers WHERE id = \(offerId) AND bundle_id = \(bundleId)),
            -- An offer code handed to the app is named by its decision's id.
            code AS (SELECT decision_id AS id FROM reclaim.offer_codes WHERE decision_id = \(offerId) AND bundle_id = \(bundleId)),
            inserted AS (
                INSERT INTO reclaim.offer_events (offer_id, event, purchase_error) SELECT id, \(event), \(error) FROM offer
                ON CONFLICT (offer_id, event) DO NOTHING
                RETURNING 1),
            inserted_code AS (
                INSERT INTO reclaim.offer_code_events (decision_id, event, purchase_error) SELECT id, \(event), \(error) FROM code
                ON CONFLICT (decision_id, event) DO NOTHING
                RETURNING 1)
            SELECT ((SELECT count(*) FROM offer) + (SELECT count(*) FROM code))::int,
                   ((SELECT count(*) FROM inserted) + (SELECT count(*) FROM inserted_code))::int
            """,
            logger: logger
        )
        for try await (offers, inserted) in rows.decode((Int, Int).self) {
            if offers == 0 { return .unknownOffer }
            return inserted == 1 ? .recorded : .duplicate
        }
        return .unknownOffer
    }

    /// The subscriber's live, deliverable offer, if any (not locked: for answers that only read). A delivery leaves
    /// out a paused campaign's offer; a grant, which supersedes whatever is live (the database allows one live offer
    /// per subscriber), passes `includingPaused` and supersedes it as it would a running campaign's.
    public static func liveOffer(
        of subscriber: SubscriberKey,
        includingPaused: Bool = false,
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> StoredOffer? {
        try await select(liveOfferOf(subscriber, includingPaused: includingPaused), connection: connection, logger: logger).first
    }

    /// The live offer of `subscriber` with the Retention Messaging message its grant names (nil when the offer is
    /// no grant's, or its grant names none), in one read: Apple waits for the realtime answer, and a second round
    /// trip for the grant made it half as fast (2,012 against 3,177 answers/s, `scripts/bench delivery`).
    public static func liveOfferWithGrantMessage(
        of subscriber: SubscriberKey,
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> (offer: StoredOffer, grantMessage: String?)? {
        let message = "(SELECT g.message_identifier FROM reclaim.grants g WHERE g.id = offers.grant_id)"
        guard let (offer, cell) = try await select(liveOfferOf(subscriber), extraColumn: message, connection: connection, logger: logger).first
        else { return nil }
        return (offer, try cell?.decode(String?.self) ?? nil)
    }

    private static func liveOfferOf(_ subscriber: SubscriberKey, includingPaused: Bool = false) -> PostgresQuery {
        """
        WHERE bundle_id = \(subscriber.bundleId) AND environment = \(subscriber.environment)
          AND original_transaction_id = \(subscriber.originalTransactionId) AND state IN ('ready', 'delivered')
          AND deliverable_until > now() \(unescaped: includingPaused ? "" : Self.campaignNotPaused)
        """
    }

    /// What every delivery adds to "live": the offer's campaign is not paused (`reclaim campaigns pause`). A paused
    /// campaign's offers stay stored and live, so they still count as the subscriber's live offer for the campaigns'
    /// rules (a resume never leaves two), and come back with `resume` while still deliverable. Read from
    /// `reclaim.campaigns` by every delivery, so a pause takes effect on every server at once. A grant's offer has
    /// no campaign row and is never held back.
    public static let campaignNotPaused =
        "AND NOT EXISTS (SELECT 1 FROM reclaim.campaigns paused WHERE paused.id = offers.campaign_id AND paused.paused_at IS NOT NULL)"
}
