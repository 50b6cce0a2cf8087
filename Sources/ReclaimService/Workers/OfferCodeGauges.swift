import Foundation
import Logging
import Metrics
import ReclaimStore

/// Each offer-code pool's codes that campaigns can still hand out, as gauges, so that an alert fires before a pool runs
/// dry or its codes expire (deploy/prometheus/reclaim-alerts.yaml, ReclaimOfferCodesRunningOut):
/// `reclaim_offer_codes_unused{app,environment,offer}` (unused, unexpired now) and
/// `reclaim_offer_codes_unused_in_14d{…}` (of those, the ones still valid 14 days from now). Counts, never codes.
struct OfferCodeGauges {
    static let horizon: TimeInterval = 14 * 86_400

    /// Reads the pools and records their gauges; a pool gone from the database is recorded 0 once, then left.
    static func record(postgres: Database, known: inout Set<[String]>, logger: Logger) async throws {
        let pools = try await postgres.withConnection(logger: logger) { connection in
            try await OfferCodeStore.unusedCounts(validFor: horizon, connection: connection, logger: logger)
        }
        var seen = Set<[String]>()
        for pool in pools {
            let labels = [pool.bundleId, pool.environment, pool.offer]
            seen.insert(labels)
            record(labels, unused: pool.unused, validLater: pool.validLater)
        }
        for gone in known.subtracting(seen) { record(gone, unused: 0, validLater: 0) }
        known = seen
    }

    private static func record(_ values: [String], unused: Int, validLater: Int) {
        let dimensions = [("app", values[0]), ("environment", values[1]), ("offer", values[2])]
        Gauge(label: "reclaim_offer_codes_unused", dimensions: dimensions).record(unused)
        Gauge(label: "reclaim_offer_codes_unused_in_14d", dimensions: dimensions).record(validLater)
    }
}
