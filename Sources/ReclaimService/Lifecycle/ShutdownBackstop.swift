import Foundation
import Logging
import ServiceLifecycle

/// The last word on shutdown: once SIGTERM (or SIGINT) has started a graceful shutdown, the process exits after
/// `limit` whatever is still running. Every database operation has a deadline and cancellation closes its
/// connection, so the graceful path ends on its own; this is for what nobody foresaw, so that an orchestrator's
/// stop never has to wait for its own SIGKILL.
///
/// Put it last in the service group: the group signals shutdown to its services in reverse order, so this one
/// arms its timer first and returns at once.
struct ShutdownBackstop: Service {
    let limit: Duration
    let logger: Logger

    func run() async throws {
        try? await gracefulShutdown()
        guard Task.isShuttingDownGracefully else { return }  // cancelled: the group ended by itself
        let (limit, logger) = (limit, logger)
        // A thread, not a task: the timer must fire even if every thread of the cooperative pool is stuck.
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18)
            logger.critical("shutdown did not complete within \(limit) of SIGTERM; exiting now")
            exit(1)
        }
    }
}
