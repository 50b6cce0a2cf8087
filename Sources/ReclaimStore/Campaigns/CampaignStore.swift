import Foundation
import Logging
import PostgresNIO
import ReclaimDomain

/// `reclaim.campaigns`: the config's campaigns mirrored for SQL joins. The config file stays authoritative.
public enum CampaignStore {
    /// Upserts every campaign and disables rows whose campaign left the config. Run it in one transaction, so
    /// dashboards never see half a config.
    public static func sync(_ campaigns: [any CampaignKind], connection: PostgresConnection, logger: Logger) async throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        for campaign in campaigns {
            let conditions = String(decoding: try encoder.encode(campaign.conditions), as: UTF8.self)
            try await connection.query(
                """
                INSERT INTO reclaim.campaigns AS c (
                    id, bundle_id, trigger, product_id, offer_identifier, deliverable_for, cooldown, holdout_percent, priority,
                    enabled, max_offers_per_subscriber, starts_at, ends_at, stand_aside_for_win_back, conditions)
                VALUES (
                    \(campaign.id), \(campaign.bundleId), \(campaign.triggerName), \(campaign.productId),
                    \(campaign.offerIdentifier), make_interval(secs => \(campaign.deliverableFor)),
                    make_interval(secs => \(campaign.cooldown)), \(Int16(campaign.holdoutPercent)), \(campaign.priority), true,
                    \(campaign.maxOffersPerSubscriber), \(campaign.startsAt), \(campaign.endsAt), \(campaign.standAsideForWinBack),
                    \(conditions)::jsonb)
                ON CONFLICT (id) DO UPDATE SET
                    bundle_id = EXCLUDED.bundle_id, trigger = EXCLUDED.trigger, product_id = EXCLUDED.product_id,
                    offer_identifier = EXCLUDED.offer_identifier, deliverable_for = EXCLUDED.deliverable_for,
                    cooldown = EXCLUDED.cooldown, holdout_percent = EXCLUDED.holdout_percent, priority = EXCLUDED.priority,
                    enabled = true, max_offers_per_subscriber = EXCLUDED.max_offers_per_subscriber,
                    starts_at = EXCLUDED.starts_at, ends_at = EXCLUDED.ends_at,
                    stand_aside_for_win_back = EXCLUDED.stand_aside_for_win_back, conditions = EXCLUDED.conditions,
                    updated_at = now()
                WHERE (c.bundle_id, c.trigger, c.product_id, c.offer_identifier, c.deliverable_for, c.cooldown,
                       c.holdout_percent, c.priority, c.enabled, c.max_offers_per_subscriber, c.starts_at, c.ends_at,
                       c.stand_aside_for_win_back, c.conditions)
                  IS DISTINCT FROM
                      (EXCLUDED.bundle_id, EXCLUDED.trigger, EXCLUDED.product_id, EXCLUDED.offer_identifier,
                       EXCLUDED.deliverable_for, EXCLUDED.cooldown, EXCLUDED.holdout_percent, EXCLUDED.priority, true,
                       EXCLUDED.max_offers_per_subscriber, EXCLUDED.starts_at, EXCLUDED.ends_at,
                       EXCLUDED.stand_aside_for_win_back, EXCLUDED.conditions)
                """,
                logger: logger
            )
        }
        let ids = campaigns.map(\.basics.id)
        try await connection.query(
            "UPDATE reclaim.campaigns SET enabled = false, updated_at = now() WHERE enabled AND NOT (id = ANY(\(ids)))",
            logger: logger
        )
    }

    /// `reclaim campaigns withdraw`: pauses the campaign and ends its live offers for good, in one transaction
    /// (`withdrawn`, with the reason: the offer.withdrawn webhook and the funnel's `withdrawn` count follow from the
    /// state). nil when no campaign of that id was ever configured; else how many offers were withdrawn.
    public static func withdraw(campaignId: String, reason: String?, postgres: Database, logger: Logger) async throws -> Int? {
        try await postgres.transaction(logger: logger) { connection in
            // Final whatever batch is under way (``WorkerBarrier``): one that read the campaigns before this commits
            // ends first, and its offers are ended below; the next ones read the campaign paused.
            try await WorkerBarrier.hold(connection: connection, logger: logger)
            let paused = try await connection.query(
                """
                UPDATE reclaim.campaigns
                SET paused_at = coalesce(paused_at, now()), paused_reason = coalesce(\(reason), paused_reason, 'withdrawn')
                WHERE id = \(campaignId) RETURNING id
                """,
                logger: logger
            )
            var found = false
            for try await _ in paused { found = true }
            guard found else { return nil }
            let ended = try await connection.query(
                """
                UPDATE reclaim.offers SET state = 'withdrawn', ended_at = now(),
                    end_reason = 'withdrawn with its campaign (reclaim campaigns withdraw)' || coalesce(': ' || \(reason), '')
                WHERE campaign_id = \(campaignId) AND state IN ('ready', 'delivered')
                RETURNING 1
                """,
                logger: logger
            )
            var count = 0
            for try await _ in ended { count += 1 }
            return count
        }
    }

    /// The ids of the campaigns switched off (`reclaim campaigns pause`).
    public static func paused(connection: PostgresConnection, logger: Logger) async throws -> Set<String> {
        let rows = try await connection.query("SELECT id FROM reclaim.campaigns WHERE paused_at IS NOT NULL", logger: logger)
        var ids = Set<String>()
        for try await id in rows.decode(String.self) { ids.insert(id) }
        return ids
    }
}
