import Foundation
import Logging
import Metrics
import Prometheus

/// Process-wide set-up, done once by the executable (never by a library or a test).
public enum Bootstrap {
    /// Logs to standard error; `LOG_LEVEL` (trace…critical) sets the level, default info; `LOG_FORMAT=json`
    /// writes one JSON object a line instead of swift-log's text. Returns the root logger.
    public static func logging(label: String = "reclaim") -> Logger {
        let environment = ProcessInfo.processInfo.environment
        let level = environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
        let format = environment["LOG_FORMAT"]?.lowercased() ?? "text"
        if format != "json" && format != "text" {
            FileHandle.standardError.write(Data("LOG_FORMAT=\(format) is neither json nor text; logging text\n".utf8))
        }
        let json = format == "json"
        LoggingSystem.bootstrap { label in
            if json {
                var handler = JSONLogHandler(label: label)
                handler.logLevel = level
                return handler
            }
            var handler = DeferredMetadataLogHandler(output: StreamLogHandler.standardError(label: label))
            handler.logLevel = level
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
