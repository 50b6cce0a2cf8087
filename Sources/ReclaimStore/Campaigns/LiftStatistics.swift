import Foundation
import Logging
import PostgresNIO

/// One row of `reclaim.campaign_variant_lift`: a campaign variant's treated group against the campaign's held-out
/// group, their rates with 95% intervals, the retention lift with its interval, and the verdict (schema.sql
/// documents each column).
public struct LiftStatistics: Sendable, Equatable, Encodable {
    public struct Rate: Sendable, Equatable, Encodable {
        public let value: Double?
        public let lower: Double?
        public let upper: Double?

        public init(value: Double?, lower: Double?, upper: Double?) {
            self.value = value
            self.lower = lower
            self.upper = upper
        }
    }

    public let bundleId: String
    public let environment: String
    public let campaignId: String
    /// Empty for a campaign without variants.
    public let variantId: String
    public let treated: Int64
    public let heldOut: Int64
    public let redemptionRate: Rate
    public let treatedRetention: Rate
    public let heldOutRetention: Rate
    public let retentionLift: Rate
    public let verdict: String
    public let neededPerGroup: Int64?

    public init(
        bundleId: String,
        environment: String,
        campaignId: String,
        variantId: String,
        treated: Int64,
        heldOut: Int64,
        redemptionRate: Rate,
        treatedRetention: Rate,
        heldOutRetention: Rate,
        retentionLift: Rate,
        verdict: String,
        neededPerGroup: Int64?
    ) {
        (self.bundleId, self.environment, self.campaignId, self.variantId) = (bundleId, environment, campaignId, variantId)
        (self.treated, self.heldOut, self.redemptionRate, self.treatedRetention) = (treated, heldOut, redemptionRate, treatedRetention)
        (self.heldOutRetention, self.retentionLift, self.verdict, self.neededPerGroup) = (heldOutRetention, retentionLift, verdict, neededPerGroup)
    }

    /// The rows of the view, of one environment, optionally one app and one campaign, and only the subscribers
    /// first triggered `since` (nil: all time).
    public static func load(
        environment: String,
        bundleId: String? = nil,
        campaign: String?,
        since: Date? = nil,
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> [LiftStatistics] {
        let rows = try await connection.query(
            """
            SELECT bundle_id, environment, campaign_id, variant_id, treated, held_out,
                   redemption_rate, redemption_rate_lower, redemption_rate_upper,
                   treated_retention, treated_retention_lower, treated_retention_upper,
                   held_out_retention, held_out_retention_lower, held_out_retention_upper,
                   retention_lift, retention_lift_lower, retention_lift_upper, verdict, needed_per_group
            FROM reclaim.campaign_variant_lift_since(coalesce(\(since)::timestamptz, '-infinity'))
            WHERE environment = \(environment) AND (\(campaign)::text IS NULL OR campaign_id = \(campaign))
              AND (\(bundleId)::text IS NULL OR bundle_id = \(bundleId))
            ORDER BY bundle_id, campaign_id, variant_id
            """,
            logger: logger
        )
        var found: [LiftStatistics] = []
        for try await row in rows {
            let cells = row.makeRandomAccess()
            func double(_ index: Int) throws -> Double? { try cells[index].decode(Double?.self) }
            found.append(
                LiftStatistics(
                    bundleId: try cells[0].decode(String.self),
                    environment: try cells[1].decode(String.self),
                    campaignId: try cells[2].decode(String.self),
                    variantId: try cells[3].decode(String.self),
                    treated: try cells[4].decode(Int64.self),
                    heldOut: try cells[5].decode(Int64.self),
                    redemptionRate: Rate(value: try double(6), lower: try double(7), upper: try double(8)),
                    treatedRetention: Rate(value: try double(9), lower: try double(10), upper: try double(11)),
                    heldOutRetention: Rate(value: try double(12), lower: try double(13), upper: try double(14)),
                    retentionLift: Rate(value: try double(15), lower: try double(16), upper: try double(17)),
                    verdict: try cells[18].decode(String.self),
                    neededPerGroup: try cells[19].decode(Int64?.self)
                )
            )
        }
        return found
    }
}
