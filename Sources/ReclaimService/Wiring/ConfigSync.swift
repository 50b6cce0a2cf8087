import Logging
import PostgresNIO
import ReclaimDomain
import ReclaimStore
import ServiceLifecycle

/// Mirrors what the config declares for SQL into the database once it answers, retrying while it does not: the
/// campaigns (`reclaim.campaigns`, for dashboards' joins) and the outbound targets (`reclaim.outbound_targets`,
/// which ingest and the triggers read to queue forwards and webhooks), and records the process's start in the audit
/// log. Then waits for shutdown (a service that returned early would stop the group).
struct ConfigSync: Service {
    let campaigns: [any CampaignKind]
    let targets: [OutboundStore.Target]
    let postgres: Database
    /// Opened after the first mirror: requests that write and the background writers wait for it.
    let gate: StartupGate
    let logger: Logger
    /// This process's start, recorded in the audit log once the database answers (``ProcessStartAudit``).
    var start: ProcessStartAudit? = nil

    func run() async throws {
        while !Task.isCancelledOrShuttingDown {
            do {
                try await postgres.transaction(logger: logger) { try await CampaignStore.sync(campaigns, connection: $0, logger: logger) }
                let orphaned = try await postgres.transaction(logger: logger) {
                    try await OutboundStore.sync(targets, connection: $0, logger: logger)
                }
                gate.open()
                await start?.record(postgres: postgres, logger: logger)
                logger.info(
                    "config mirrored to reclaim.campaigns and reclaim.outbound_targets",
                    metadata: ["campaigns": "\(campaigns.count)", "targets": "\(targets.count)"]
                )
                if orphaned > 0 {
                    logger.warning(
                        "jobs of targets removed from the config are now dead (reclaim jobs dead lists them)",
                        metadata: ["jobs": "\(orphaned)"]
                    )
                }
                break
            } catch {
                logger.warning("could not mirror the config yet; retrying", metadata: ["error": "\(String(reflecting: error))"])
                try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(5)) }
            }
        }
        try? await gracefulShutdown()
    }
}
