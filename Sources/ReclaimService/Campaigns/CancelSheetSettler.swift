import Logging
import ReclaimStore
import ServiceLifecycle

/// Settles cancel-sheet decisions whose save window has ended (``CancelSheetStore/settle(limit:connection:logger:)``),
/// so each decision's outcome is read at the window's end and final from then on: an annual subscriber renews months
/// later, and auto-renew status then is the signal. Run by every worker process; batches are locked with SKIP LOCKED.
struct CancelSheetSettler: Service {
    let postgres: Database
    let interval: Duration
    var batchSize = 1000
    let logger: Logger

    func run() async throws {
        while !Task.isCancelledOrShuttingDown {
            do {
                try await tick()
            } catch {
                if !Task.isCancelledOrShuttingDown { logger.warning("settling cancel-sheet decisions failed", metadata: ["error": "\(error)"]) }
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }

    /// Settles batch after batch until none is due; returns how many.
    @discardableResult
    func tick() async throws -> Int {
        var settled = 0
        while !Task.isCancelledOrShuttingDown {
            let count = try await postgres.transaction(logger: logger) {
                try await CancelSheetStore.settle(limit: batchSize, connection: $0, logger: logger)
            }
            settled += count
            if count < batchSize { break }
        }
        if settled > 0 { logger.info("settled cancel-sheet decisions", metadata: ["decisions": "\(settled)"]) }
        return settled
    }
}
