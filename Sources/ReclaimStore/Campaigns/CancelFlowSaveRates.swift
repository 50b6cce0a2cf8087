import Foundation
import Logging
import PostgresNIO

/// One row of `reclaim.cancel_flow_save_rates`: a cancel-flow arm, for one survey answer or all (`*`), against its
/// campaign's holdout, with 95% intervals (schema.sql documents each column).
public struct CancelFlowSaveRates: Sendable, Equatable, Encodable {
    public let bundleId: String
    public let environment: String
    public let campaignId: String
    /// Empty for a campaign without variants.
    public let variantId: String
    /// The survey answer (`none`: no answer), or `*` for every one.
    public let surveyReason: String
    public let saved: Int64
    public let lost: Int64
    /// Windows still running, nothing lost yet.
    public let open: Int64
    public let saveRate: LiftStatistics.Rate
    /// Not lost so far (saved or open): readable before the windows end.
    public let keptRate: LiftStatistics.Rate
    public let heldOutSaved: Int64
    public let heldOutLost: Int64
    public let heldOutOpen: Int64
    public let heldOutKeptRate: LiftStatistics.Rate
    public let lift: LiftStatistics.Rate
    public let keptLift: LiftStatistics.Rate
    /// `cancel-flow`, telling these rows from the others in `reclaim campaigns report --json`.
    public let kind = "cancel-flow"

    /// The rows of one environment, optionally one campaign.
    public static func load(
        environment: String,
        campaign: String?,
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> [CancelFlowSaveRates] {
        let rows = try await connection.query(
            """
            SELECT bundle_id, environment, campaign_id, variant_id, survey_reason, saved, lost, open, save_rate, save_rate_lower, save_rate_upper,
                   kept_rate, kept_rate_lower, kept_rate_upper, held_out_saved, held_out_lost, held_out_open, held_out_kept_rate,
                   held_out_kept_rate_lower, held_out_kept_rate_upper, lift, lift_lower, lift_upper, kept_lift, kept_lift_lower, kept_lift_upper
            FROM reclaim.cancel_flow_save_rates
            WHERE environment = \(environment) AND (\(campaign)::text IS NULL OR campaign_id = \(campaign))
            ORDER BY bundle_id, campaign_id, variant_id, survey_reason = '*' DESC, survey_reason
            """,
            logger: logger
        )
        var found: [CancelFlowSaveRates] = []
        for try await row in rows {
            let cells = row.makeRandomAccess()
            func double(_ index: Int) throws -> Double? { try cells[index].decode(Double?.self) }
            func rate(_ index: Int) throws -> LiftStatistics.Rate {
                .init(value: try double(index), lower: try double(index + 1), upper: try double(index + 2))
            }
            found.append(
                CancelFlowSaveRates(
                    bundleId: try cells[0].decode(String.self),
                    environment: try cells[1].decode(String.self),
                    campaignId: try cells[2].decode(String.self),
                    variantId: try cells[3].decode(String.self),
                    surveyReason: try cells[4].decode(String.self),
                    saved: try cells[5].decode(Int64.self),
                    lost: try cells[6].decode(Int64.self),
                    open: try cells[7].decode(Int64.self),
                    saveRate: try rate(8),
                    keptRate: try rate(11),
                    heldOutSaved: try cells[14].decode(Int64.self),
                    heldOutLost: try cells[15].decode(Int64.self),
                    heldOutOpen: try cells[16].decode(Int64.self),
                    heldOutKeptRate: try rate(17),
                    lift: try rate(20),
                    keptLift: try rate(23)
                )
            )
        }
        return found
    }

    enum CodingKeys: String, CodingKey {
        case bundleId, environment, campaignId, variantId, surveyReason, saved, lost, open, saveRate, keptRate, heldOutSaved, heldOutLost
        case heldOutOpen, heldOutKeptRate, lift, keptLift, kind
    }
}
