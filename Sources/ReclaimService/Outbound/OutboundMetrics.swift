import Metrics
import ReclaimStore

/// One target's metrics (exported by /metrics), labelled by kind, app and the URL without query or user info.
struct OutboundMetrics: Sendable {
    let sent: Counter
    let failed: Counter
    let retried: Counter
    let dead: Counter
    let duration: Metrics.Timer

    init(_ target: OutboundTarget) {
        let dimensions = [("kind", target.row.kind), ("app", target.row.bundleId), ("target", target.shownURL)]
        sent = Counter(label: "reclaim_outbound_sent_total", dimensions: dimensions)
        failed = Counter(label: "reclaim_outbound_failed_total", dimensions: dimensions)
        retried = Counter(label: "reclaim_outbound_retried_total", dimensions: dimensions)
        dead = Counter(label: "reclaim_outbound_dead_total", dimensions: dimensions)
        duration = Metrics.Timer(label: "reclaim_outbound_request_duration_seconds", dimensions: dimensions)
    }
}
