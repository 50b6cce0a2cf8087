import Foundation
import Logging
import PostgresNIO

/// One row of `reclaim.cancel_sheet_save_rates`: a cancel-sheet arm's save rate against its campaign's holdout
/// (Apple's own fallback), with 95% intervals (schema.sql documents each column).
public struct SaveRateStatistics: Sendable, Equatable, Encodable {
    public let bundleId: String
    public let environment: String
    public let campaignId: String
    /// Empty for a campaign without variants.
    public let variantId: String
    public let saved: Int64
    public let lost: Int64
    public let undecided: Int64
    public let saveRate: LiftStatistics.Rate
    public let heldOutSaved: Int64
    public let heldOutLost: Int64
    public let heldOutSaveRate: LiftStatistics.Rate
    public let lift: LiftStatistics.Rate
    /// `cancel-sheet`, telling these rows from the notification campaigns' in `reclaim campaigns report --json`.
    public let kind = "cancel-sheet"

    /// The rows of one environment, optionally one app and one campaign.
    public static func load(
        environment: String,
        bundleId: String? = nil,
        campaign: String?,
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> [SaveRateStatistics] {
        let rows = try await connection.query(
            """
            SELECT bundle_id, environment, campaign_id, variant_id, saved, lost, undecided, save_rate, save_rate_lower, save_rate_upper,
                   held_out_saved, held_out_lost, held_out_save_rate, held_out_save_rate_lower, held_out_save_rate_upper,
                   lift, lift_lower, lift_upper
            FROM reclaim.cancel_sheet_save_rates
            WHERE environment = \(environment) AND (\(campaign)::text IS NULL OR campaign_id = \(campaign))
              AND (\(bundleId)::text IS NULL OR bundle_id = \(bundleId))
            ORDER BY bundle_id, campaign_id, variant_id
            """,
            logger: logger
        )
        var found: [SaveRateStatistics] = []
        for try await row in rows {
            let cells = row.makeRandomAccess()
            func double(_ index: Int) throws -> Double? { try cells[index].decode(Double?.self) }
            found.append(
                SaveRateStatistics(
                    bundleId: try cells[0].decode(String.self),
                    environment: try cells[1].decode(String.self),
                    campaignId: try cells[2].decode(String.self),
                    variantId: try cells[3].decode(String.self),
                    saved: try cells[4].decode(Int64.self),
                    lost: try cells[5].decode(Int64.self),
                    undecided: try cells[6].decode(Int64.self),
                    saveRate: .init(value: try double(7), lower: try double(8), upper: try double(9)),
                    heldOutSaved: try cells[10].decode(Int64.self),
                    heldOutLost: try cells[11].decode(Int64.self),
                    heldOutSaveRate: .init(value: try double(12), lower: try double(13), upper: try double(14)),
                    lift: .init(value: try double(15), lower: try double(16), upper: try double(17))
                )
            )
        }
        return found
    }

    enum CodingKeys: String, CodingKey {
        case bundleId, environment, campaignId, variantId, saved, lost, undecided, saveRate, heldOutSaved, heldOutLost, heldOutSaveRate, lift, kind
    }
}
