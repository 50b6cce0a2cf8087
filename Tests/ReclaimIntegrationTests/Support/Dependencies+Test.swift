import Logging
import PostgresNIO
import Prometheus
import ReclaimDomain
import ReclaimService
import ReclaimStore

extension Dependencies {
    /// Dependencies for route tests: the given database, an empty config, a private metrics registry.
    static func test(postgres: Database, config: ReclaimConfig = ReclaimConfig(), verifier: AppleJWSVerifier? = nil) throws -> Dependencies {
        try Dependencies(
            config: config,
            postgres: postgres,
            metricsRegistry: PrometheusCollectorRegistry(),
            logger: TestPostgres.logger,
            verifier: verifier
        )
    }
}
