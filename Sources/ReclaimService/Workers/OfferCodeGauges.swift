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
            var pools: [(labels: [String], unused: Int, later: Int)] = []
            for try await (bundle, environment, offer, unused, later) in try await connection.query(
                """
                SELECT p.bundle_id, p.environment, p.offer_reference_name,
                       count(c.code) FILTER (WHERE c.expires_at > now()),
                       count(c.code) FILTER (WHERE c.expires_at > now() + make_interval(secs => \(Int(horizon))))
                FROM reclaim.offer_code_pools p
                LEFT JOIN reclaim.offer_codes c
                  ON c.bundle_id = p.bundle_id AND c.environment = p.environment AND c.offer_reference_name = p.offer_reference_name
                 AND c.decision_id IS NULL
                GROUP BY 1, 2, 3
                """,
                logger: logger
            ).decode((String, String, String, Int, Int).self) {
                pools.append(([bundle, environment, offer], unused, later))
            }
            return pools
        }
        var seen = Set<[String]>()
        for pool in pools {
            seen.insert(pool.labels)
            gauge("reclaim_offer_codes_unused", pool.labels).record(pool.unused)
            gauge("reclaim_offer_codes_unused_in_14d", pool.labels).record(pool.later)
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
