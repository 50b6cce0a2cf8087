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
            gauge("reclaim_offer_codes_unused", labels).record(pool.unused)
            gauge("reclaim_offer_codes_unused_in_14d", labels).record(pool.validLater)
        }
        for gone in known.subtracting(seen) {
            gauge("reclaim_offer_codes_unused", gone).record(0)
            gauge("reclaim_offer_codes_unused_in_14d", gone).record(0)
        }
        known = seen
    }

    private static func gauge(_ label: String, _ values: [String]) -> Gauge {
        Gauge(label: label, dimensions: [("app", values[0]), ("environment", values[1]), ("offer", values[2])])
    }
}
