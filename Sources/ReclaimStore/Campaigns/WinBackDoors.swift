import Foundation
import Logging
import PostgresNIO

/// One row of `reclaim.win_back_doors`: a campaign of Reclaim's, or one of the doors Reclaim does not open (Apple's
/// win-back offers, App Store Connect's retention offers, offer codes Reclaim did not give), with whom each won back
/// (schema.sql documents each column).
public struct WinBackDoors: Sendable, Equatable, Encodable {
    public let bundleId: String
    public let environment: String
    /// `campaign`, `apple_win_back`, `app_store_connect_retention` or `offer_code_outside_reclaim`.
    public let door: String
    /// For `campaign`: which.
    public let campaignId: String?
    /// For `campaign`: its decisions, those made while Apple listed win-back offers for the subscriber, and those that
    /// stood aside for them; subscribers it offered to.
    public let decisions: Int64?
    public let appleListed: Int64?
    public let stoodAside: Int64?
    public let subscribersOffered: Int64?
    /// Subscribers who redeemed through this door.
    public let subscribersRedeemed: Int64
    /// `door`, telling these rows from the others in `reclaim campaigns report --json`.
    public let kind = "door"

    /// The rows of one environment; with `campaign`, that campaign's row and Apple's doors.
    public static func load(environment: String, campaign: String?, connection: PostgresConnection, logger: Logger) async throws -> [Self] {
        let rows = try await connection.query(
            """
            SELECT bundle_id, environment, door, campaign_id, decisions, apple_listed, stood_aside, subscribers_offered, subscribers_redeemed
            FROM reclaim.win_back_doors
            WHERE environment = \(environment) AND (\(campaign)::text IS NULL OR campaign_id IS NULL OR campaign_id = \(campaign))
            ORDER BY bundle_id, door = 'campaign' DESC, campaign_id, door
            """,
            logger: logger
        )
        var found: [Self] = []
        for try await row in rows.decode((String, String, String, String?, Int64?, Int64?, Int64?, Int64?, Int64).self) {
            found.append(
                Self(
                    bundleId: row.0,
                    environment: row.1,
                    door: row.2,
                    campaignId: row.3,
                    decisions: row.4,
                    appleListed: row.5,
                    stoodAside: row.6,
                    subscribersOffered: row.7,
                    subscribersRedeemed: row.8
                )
            )
        }
        return found
    }
}
