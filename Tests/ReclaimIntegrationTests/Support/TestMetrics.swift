import Metrics
import Prometheus
import ReclaimService

/// A Prometheus registry as the test process's swift-metrics backend (bootstrapped once, on first use), so
/// tests can read the counters the service increments.
enum TestMetrics {
    static let registry: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(Bootstrap.factory(registry: registry))
        return registry
    }()

    /// A counter's value, 0 when it was never incremented.
    static func counterValue(_ name: String, dimensions: [(String, String)] = []) -> Int {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        let labels = dimensions.map { "\($0.0)=\"\($0.1)\"" }.joined(separator: ",")
        let prefix = labels.isEmpty ? name + " " : name + "{" + labels + "} "
        for line in String(decoding: buffer, as: UTF8.self).split(separator: "\n") where line.hasPrefix(prefix) {
            return Int(Double(line.dropFirst(prefix.count)) ?? 0)
        }
        return 0
    }
}
