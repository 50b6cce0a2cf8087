import Foundation
import Logging
import Metrics
import ReclaimStore

/// Marks recorded cancel-sheet decisions `too_late` when their answer could not leave in time (Apple got `{}`), and
/// keeps trying each mark until it lands. A late answer means the database is slow or away: exactly when one attempt
/// fails, so a single fire-and-forget attempt was lost under the overload that made it necessary and left the record
/// saying `answered`. Each failed attempt is logged and counted (`reclaim_cancel_sheet_too_late_retries_total`); the
/// attempts back off from 50 ms to 5 s. Only a process that dies with marks still pending loses them, and it logs
/// each one it could not yet land.
public final class TooLateMarks: Sendable {
    let postgres: Database
    let logger: Logger
    static let firstRetry: Duration = .milliseconds(50)
    static let lastRetry: Duration = .seconds(5)

    public init(postgres: Database, logger: Logger) {
        self.postgres = postgres
        self.logger = logger
    }

    /// Starts marking `id`; returns at once (the answer `{}` must not wait). The task returned ends once it landed.
    @discardableResult
    public func mark(_ id: UUID) -> Task<Void, Never> {
        let (postgres, logger) = (postgres, logger)
        return Task {
            var wait = Self.firstRetry
            var attempt = 1
            while true {
                do {
                    try await CancelSheetStore.markTooLate(id, postgres: postgres, logger: logger)
                    if attempt > 1 {
                        logger.notice("cancel-sheet decision marked too_late", metadata: ["decision": "\(id)", "attempts": "\(attempt)"])
                    }
                    return
                } catch {
                    Counter(label: "reclaim_cancel_sheet_too_late_retries_total").increment()
                    logger.warning(
                        "could not mark a cancel-sheet decision too_late; trying again",
                        metadata: ["decision": "\(id)", "attempt": "\(attempt)", "retryIn": "\(wait)", "error": "\(String(reflecting: error))"]
                    )
                }
                try? await Task.sleep(for: wait)
                wait = min(wait * 2, Self.lastRetry)
                attempt += 1
            }
        }
    }
}
