import Foundation
import Logging
import PostgresNIO
import ReclaimDomain

/// Every statement on `reclaim.offer_code_pools` and `reclaim.offer_codes` (``OfferCodes``): here the pools (import,
/// status, the gauges' counts), each on a connection of its own; the worker's in OfferCodeStore+Issue.swift, on the
/// job's connection in its transaction; the app's in OfferCodeStore+Delivery.swift.
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
}
