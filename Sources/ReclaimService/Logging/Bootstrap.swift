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
            var handler = TextLogHandler(output: StreamLogHandler.standardError(label: label))
            handler.logLevel = level
            return handler
        }
        return Logger(label: label)
    }

    /// Routes swift-metrics into a Prometheus registry served at /metrics.
    public static func metrics() -> PrometheusCollectorRegistry {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(factory(registry: registry))
        return registry
    }

    /// The factory, with histogram buckets fitted to what they measure: a notification's signature and chain
    /// checks take a fraction of a millisecond once its chain is cached, below the default buckets' first (5 ms).
    public static func factory(registry: PrometheusCollectorRegistry) -> PrometheusMetricsFactory {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets["reclaim_notification_verification_seconds"] = [
            .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2.5),
            .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(100),
        ]
        return factory
    }
}
