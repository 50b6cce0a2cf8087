import Foundation
import Logging
import PostgresNIO

/// One row of `reclaim.campaign_decisions_by_source`: a campaign's (variant's) decisions on live notifications or on
/// state `reclaim backfill --evaluate` imported, apart (schema.sql documents each column).
public struct DecisionSourceCounts: Sendable, Equatable, Encodable {
    public let bundleId: String
    public let environment: String
    public let campaignId: String
    /// Empty for a campaign without variants.
    public let variantId: String
    /// `live` or `backfill`.
    public let source: String
    public let decided: Int64
    public let offered: Int64
    public let heldOut: Int64
    public let skipped: Int64
    /// `decisions`, telling these rows from the lift and save-rate rows in `reclaim campaigns report --json`.
    public let kind = "decisions"

    /// The rows of one environment, optionally one campaign.
    public static func load(environment: String, campaign: String?, connection: PostgresConnection, logger: Logger) async throws -> [Self] {
        let rows = try await connection.query(
            """
            SELECT bundle_id, environment, campaign_id, variant_id, source, decided, offered, held_out, skipped
            FROM reclaim.campaign_decisions_by_source
            WHERE environment = \(environment) AND (\(campaign)::text IS NULL OR campaign_id = \(campaign))
            ORDER BY bundle_id, campaign_id, variant_id, source DESC
            """,
            logger: logger
        )
        var found: [Self] = []
        for try await (bundle, environment, campaign, variant, source, decided, offered, heldOut, skipped) in rows.decode(
            (String, String, String, String, String, Int64, Int64, Int64, Int64).self
        ) {
            found.append(
                Self(
                    bundleId: bundle,
                    environment: environment,
                    campaignId: campaign,
                    variantId: variant,
                    source: source,
                    decided: decided,
                    offered: offered,
                    heldOut: heldOut,
                    skipped: skipped
                )
            )
        }
        return found
    }
}
