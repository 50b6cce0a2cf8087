import Logging
import PostgresNIO
import Prometheus

/// Everything the routes and services need, built once in `ReclaimServer` (or a test) and passed in.
public struct Dependencies: Sendable {
    public var config: ReclaimConfig
    public var postgres: PostgresClient
    public var metricsRegistry: PrometheusCollectorRegistry
    public var logger: Logger

    public init(config: ReclaimConfig, postgres: PostgresClient, metricsRegistry: PrometheusCollectorRegistry, logger: Logger) {
        self.config = config
        self.postgres = postgres
        self.metricsRegistry = metricsRegistry
        self.logger = logger
    }
}
