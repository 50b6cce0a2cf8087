import Logging
import PostgresNIO
import Prometheus
import ReclaimDomain
import ReclaimService
import ReclaimStore

extension Dependencies {
    /// Dependencies for route tests: the given database, an empty config, a private metrics registry.
    ///
    /// The Retention Messaging budget is the largest the product allows unless a test names one: a test that is not
    /// about the budget must not read a busy machine's late answer (`{}`, by design) as the product's decision.
    /// Tests of the budget itself pass `retentionBudgetMilliseconds` (nil keeps the config's).
    static func test(
        postgres: Database,
        config: ReclaimConfig = ReclaimConfig(),
        verifier: AppleJWSVerifier? = nil,
        retentionBudgetMilliseconds: Int? = ReclaimConfig.Server.retentionBudgetLimits.upperBound
    ) throws -> Dependencies {
        var config = config
        if let retentionBudgetMilliseconds { config.server.retentionBudgetMilliseconds = retentionBudgetMilliseconds }
        return try Dependencies(
            config: config,
            postgres: postgres,
            metricsRegistry: PrometheusCollectorRegistry(),
            logger: TestPostgres.logger,
            verifier: verifier
        )
    }
}
