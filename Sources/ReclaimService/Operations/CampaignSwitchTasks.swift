import Foundation
import Logging
import ReclaimStore

/// `reclaim campaigns pause`, `resume` and `withdraw`: the kill switch. The switch is a column of `reclaim.campaigns`,
/// which every cancel-sheet answer and every offer delivery reads in its statement and the workers read with every
/// batch, so it takes effect on every server at once, without a restart or a config change.
public enum CampaignSwitchTasks {
    /// Switches `campaignId` off or on; the line to print. Throws when no campaign of that id was ever configured (a
    /// campaign appears in `reclaim.campaigns` once a server started with it).
    public static func setPaused(
        _ paused: Bool,
        campaignId: String,
        reason: String?,
        actor: String? = nil,
        url: DatabaseURL,
        logger: Logger
    ) async throws -> String {
        let action = paused ? "campaign.pause" : "campaign.resume"
        return try await Audit.recording(action, target: .text("campaign:\(campaignId)"), detail: reason, actor: actor, url: url, logger: logger) {
            try await switchPaused(paused, campaignId: campaignId, reason: reason, url: url, logger: logger)
        }
    }

    static func switchPaused(_ paused: Bool, campaignId: String, reason: String?, url: DatabaseURL, logger: Logger) async throws -> String {
        try await Database.withDatabase(url, maxConnections: 1, logger: logger) { client in
            guard try await CancelSheetStore.setPaused(paused, campaignId: campaignId, reason: reason, postgres: client, logger: logger) else {
                throw ConfigError(
                    "no campaign \(campaignId) in reclaim.campaigns: a campaign is listed there once a server has started with it in its config"
                )
            }
            return paused
                ? "paused \(campaignId): it decides nothing and its offers are not handed out until reclaim campaigns resume \(campaignId)"
                : "resumed \(campaignId)"
        }
    }

    /// Pauses `campaignId` and withdraws its live offers for good; the line to print. A later resume decides anew and
    /// never revives them.
    public static func withdraw(campaignId: String, reason: String?, actor: String? = nil, url: DatabaseURL, logger: Logger) async throws -> String {
        try await Audit.recording(
            "campaign.withdraw",
            target: .text("campaign:\(campaignId)"),
            detail: reason,
            actor: actor,
            url: url,
            logger: logger
        ) {
            try await withdrawOffers(campaignId: campaignId, reason: reason, url: url, logger: logger)
        }
    }

    static func withdrawOffers(campaignId: String, reason: String?, url: DatabaseURL, logger: Logger) async throws -> String {
        try await Database.withDatabase(url, maxConnections: 1, logger: logger) { client in
            guard let count = try await CampaignStore.withdraw(campaignId: campaignId, reason: reason, postgres: client, logger: logger) else {
                throw ConfigError(
                    "no campaign \(campaignId) in reclaim.campaigns: a campaign is listed there once a server has started with it in its config"
                )
            }
            return "withdrew \(campaignId): paused, and \(count) live offer\(count == 1 ? "" : "s") ended for good (an app that already "
                + "fetched one may still show it until it fetches again); reclaim campaigns resume \(campaignId) decides anew"
        }
    }

    /// The switched-off campaigns, a line each.
    public static func paused(url: DatabaseURL, logger: Logger) async throws -> [String] {
        try await Database.withDatabase(url, maxConnections: 1, logger: logger) { client in
            try await CancelSheetStore.paused(postgres: client, logger: logger).map { id, at, reason in
                "\(id) paused \(at.formatted(.iso8601))\(reason.map { ": \($0)" } ?? "")"
            }
        }
    }
}
