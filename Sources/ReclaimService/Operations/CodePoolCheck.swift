import Foundation
import Logging
import ReclaimDomain
import ReclaimStore

/// What `reclaim campaigns check` says of the campaigns that hand out offer codes, against the pools in the database:
/// a pool missing in every environment of the app, empty, of another product, or whose eligibility does not admit the
/// subscribers the campaign's trigger reaches is a problem; missing in one of the app's environments, a warning.
enum CodePoolCheck {
    /// Reads the pools (at `url`) when a campaign hands out codes; a problem when there is no database to read.
    static func run(_ config: ReclaimConfig, campaigns: [NotificationCampaign], url: DatabaseURL?, logger: Logger) async throws -> [String] {
        guard campaigns.contains(where: { $0.variants.contains { $0.offerCodes != nil } }) else { return [] }
        guard let url else {
            throw ConfigError("campaigns hand out offer codes: give DATABASE_URL (or --database-url) so that the check can read their pools")
        }
        let pools = try await Database.withDatabase(url, maxConnections: 1, logger: logger) { postgres in
            try await postgres.withConnection(logger: logger) { try await OfferCodeStore.status(connection: $0, logger: logger) }
        }
        let (problems, warnings) = judge(campaigns, environments: config.apps.reduce(into: [:]) { $0[$1.bundleId] = $1.environments }, pools: pools)
        if !problems.isEmpty { throw ConfigError(problems.joined(separator: "\n")) }
        return warnings
    }

    /// The problems and warnings of each code campaign (pure: the tests give it pools).
    static func judge(
        _ campaigns: [NotificationCampaign],
        environments: [String: [String]],
        pools: [OfferCodeStore.Status]
    ) -> (problems: [String], warnings: [String]) {
        var problems: [String] = []
        var warnings: [String] = []
        for campaign in campaigns {
            let needed = OfferCodes.Eligibility.of(campaign.trigger)
            for variant in campaign.variants {
                guard let offer = variant.offerCodes else { continue }
                let name = "campaign \(campaign.id)\(variant.id.isEmpty ? "" : " variant \(variant.id)"): offer code \(offer)"
                let found = pools.filter { $0.bundleId == campaign.bundleId && $0.offer == offer }
                guard !found.isEmpty else {
                    problems.append("\(name): no pool of that offer for \(campaign.bundleId): import its codes with reclaim codes import")
                    continue
                }
                for environment in environments[campaign.bundleId] ?? [] where !found.contains(where: { $0.environment == environment }) {
                    warnings.append("warning: \(name): no \(environment) pool: \(environment) subscribers get nothing from this campaign")
                }
                for pool in found {
                    let at = "\(name) (\(pool.environment))"
                    if pool.unused == 0 { problems.append("\(at): the pool has no unused, unexpired code: import more") }
                    if !pool.eligibility.contains(needed.rawValue) {
                        problems.append(
                            "\(at): the offer is for \(pool.eligibility.joined(separator: ", ")) subscribers, but \(campaign.trigger) reaches \(needed.rawValue) ones: "
                                + "Apple would refuse their codes"
                        )
                    }
                    if !variant.productId.isEmpty, variant.productId != pool.productId {
                        problems.append("\(at): the pool's product is \(pool.productId), the campaign names \(variant.productId)")
                    }
                }
            }
        }
        return (problems, warnings)
    }
}
