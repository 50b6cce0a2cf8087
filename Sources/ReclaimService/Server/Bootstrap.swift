import Foundation
import Logging
import Metrics
import Prometheus

/// Process-wide set-up, done once by the executable (never by a library or a test).
public enum Bootstrap {
    /// Logs to standard error; `LOG_LEVEL` (trace…critical) sets the level, default info.
    /// Returns the root logger.
    public static func logging(label: String = "reclaim") -> Logger {
        LoggingSystem.bootstrap { label in
            var handler = DeferredMetadataLogHandler(output: StreamLogHandler.standardError(label: label))
            handler.logLevel = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
            return handler
        }
        return Logger(label: label)
    }

    /// Routes swift-metrics into a Prometheus registry served at /metrics.
    public static func metrics() -> PrometheusCollectorRegistry {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        return registry
    }
}
