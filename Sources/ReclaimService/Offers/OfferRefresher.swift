import Foundation
import Logging
import PostgresNIO
import ReclaimDomain
import ReclaimStore
import ServiceLifecycle

/// Keeps live offers usable: re-signs those whose stored signatures are older than `resignAfter` (Apple accepts
/// a signature for 24 hours, so an offer fetched on day 6 of 7 is still valid) and expires those whose delivery
/// window closed. Run by every worker process; batches are locked with SKIP LOCKED, so several refreshers share
/// the work. Each tick reads the partial indexes in order and stops at the first offer not due: its cost grows
/// with the offers due, not with the offers stored.
public struct OfferRefresher: Service {
    public let postgres: Database
    /// Signs, by its ``SignaturePolicy`` (`resignAfter`).
    public let issuer: OfferIssuer
    public let interval: Duration
    public let batchSize: Int
    let logger: Logger
    let metrics = CampaignMetrics()

    public init(postgres: Database, issuer: OfferIssuer, interval: Duration, batchSize: Int = 500, logger: Logger) {
        self.postgres = postgres
        self.issuer = issuer
        self.interval = interval
        self.batchSize = batchSize
        self.logger = logger
    }

    public func run() async throws {
        while !Task.isCancelledOrShuttingDown {
            do {
                try await tick()
            } catch {
                if !Task.isCancelledOrShuttingDown { logger.warning("offer refresh failed", metadata: ["error": "\(String(reflecting: error))"]) }
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }

    /// One round: expire, then re-sign batch after batch until nothing is due. Returns (expired, re-signed).
    @discardableResult
    public func tick() async throws -> (expired: Int, resigned: Int) {
        var expired = 0
        while true {
            let count = try await postgres.withConnection(logger: logger) {
                try await OfferStore.expire(limit: batchSize, connection: $0, logger: logger)
            }
            expired += count
            if count < batchSize { break }
        }
        if expired > 0 {
            metrics.expired(expired)
            logger.info("expired offers", metadata: ["offers": "\(expired)"])
        }
        var resigned = 0
        while !Task.isCancelledOrShuttingDown {
            let count = try await resignBatch()
            resigned += count
            if count < batchSize { break }
        }
        if resigned > 0 { logger.info("re-signed offers", metadata: ["offers": "\(resigned)"]) }
        return (expired, resigned)
    }

    private func resignBatch() async throws -> Int {
        let signedBefore = issuer.refreshCutoff()
        return try await postgres.transaction(logger: logger) { connection in
            let due = try await OfferStore.lockDueForResigning(signedBefore: signedBefore, limit: batchSize, connection: connection, logger: logger)
            for var offer in due {
                // No signer: the app left the config; the offer is left to expire.
                guard try issuer.refresh(&offer) else { continue }
                try await OfferStore.saveSignatures(offer, connection: connection, logger: logger)
            }
            return due.count
        }
    }
}
