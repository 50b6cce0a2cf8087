import Logging
import PostgresNIO
import ReclaimDomain
import ReclaimStore
import ServiceLifecycle

/// Mirrors the config's campaigns into `reclaim.campaigns` once the database answers, retrying while it does
/// not, then waits for shutdown (a service that returned early would stop the group).
struct CampaignSync: Service {
    let campaigns: [Campaign]
    let postgres: Database
    let logger: Logger

    func run() async throws {
        while !Task.isCancelledOrShuttingDown {
            do {
                try await CampaignStore.sync(campaigns, postgres: postgres, logger: logger)
                logger.info("campaigns mirrored to reclaim.campaigns", metadata: ["campaigns": "\(campaigns.count)"])
                break
            } catch {
                logger.warning("could not mirror campaigns yet; retrying", metadata: ["error": "\(String(reflecting: error))"])
                try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(5)) }
            }
        }
        try? await gracefulShutdown()
    }
}
