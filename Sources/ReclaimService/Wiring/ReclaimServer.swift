import Foundation
import Hummingbird
import Logging
import PostgresNIO
import Prometheus
import ReclaimStore
import ServiceLifecycle
import UnixSignals

/// `reclaim serve`: runs the HTTP API and/or the workers until SIGTERM or SIGINT, then shuts
/// down gracefully (in-flight requests and jobs finish first).
public struct ReclaimServer: Sendable {
    public var config: ReclaimConfig
    public var databaseURL: DatabaseURL
    public var role: ServerRole
    public var host: String
    public var port: Int
    /// Apply the schema at start-up (what `reclaim dev` wants; production runs `reclaim migrate` once per release).
    public var migrateOnStart: Bool
    /// The SHA-256 of the config file, for the audit log's `process.start` (campaign changes arrive by config).
    public var configSHA256: String?

    public init(config: ReclaimConfig, databaseURL: DatabaseURL, role: ServerRole, host: String, port: Int, migrateOnStart: Bool = false) {
        self.config = config
        self.databaseURL = databaseURL
        self.role = role
        self.host = host
        self.port = port
        self.migrateOnStart = migrateOnStart
    }

    public func run(metricsRegistry: PrometheusCollectorRegistry, logger: Logger, onReady: @escaping @Sendable () -> Void = {}) async throws {
        let postgres = Database(
            url: databaseURL,
            maxConnections: config.server.databaseConnections,
            deadlines: config.database.deadlines,
            preparedStatements: config.database.preparedStatements,
            backgroundLogger: logger
        )
        var dependencies = try Dependencies(config: config, postgres: postgres, metricsRegistry: metricsRegistry, logger: logger)
        let gate = StartupGate(open: false)
        dependencies.startupGate = gate
        StartupMetrics.register(config: config)
        if migrateOnStart {
            try await Database.withDatabase(databaseURL, maxConnections: 2, logger: logger) { client in
                try await Migrator().migrate(client: client, logger: logger)
            }
        }
        var services: [any Service] = [
            ConfigSync(
                campaigns: dependencies.campaigns,
                targets: dependencies.outboundTargets.map(\.row),
                postgres: postgres,
                gate: gate,
                logger: logger,
                start: ProcessStartAudit(role: role, configSHA256: configSHA256)
            ),
            SystemdWatchdog(liveness: dependencies.liveness, logger: logger),
            AppStopWatcher(stops: dependencies.appStops, logger: logger),
        ]
        if role.servesAPI {
            services.append(LiveOfferListener(index: dependencies.liveOffers, postgres: postgres, logger: logger))
        }
        if role.runsWorkers {
            let queue = JobQueue(postgres: postgres)
            // The writers start once the config is mirrored: their events queue webhooks for the mirrored targets.
            let writers: [any Service] = [
                WorkerPool(
                    queue: queue,
                    handlers: jobHandlers(dependencies),
                    options: .init(config.worker),
                    liveness: dependencies.liveness,
                    logger: logger
                ),
                OutboundSender(
                    targets: dependencies.outboundTargets,
                    postgres: postgres,
                    concurrency: config.forwarding.concurrency,
                    allowPrivate: config.forwarding.allowPrivate,
                    pollInterval: config.worker.pollInterval.duration,
                    logger: logger
                ),
                OfferRefresher(postgres: postgres, issuer: dependencies.issuer, interval: config.offers.refreshInterval.duration, logger: logger),
                CancelSheetSettler(postgres: postgres, interval: config.offers.refreshInterval.duration, logger: logger),
                PeriodicReconciliation(
                    dependencies: dependencies,
                    interval: config.reconciliation.interval.duration,
                    lookBack: TimeInterval(config.reconciliation.lookBack.seconds)
                ),
            ]
            services += writers.map { GatedService(gate: gate, service: $0) }
            services.append(QueueMaintenance(queue: queue, completedRetention: config.worker.completedRetention.duration, logger: logger))
        }
        let application = buildApplication(dependencies, role: role, host: host, port: port, extraServices: services)
        // After SIGTERM, in-flight work gets worker.shutdownTimeout (the worker pool cancels its lanes then); the
        // group cancels what still runs two seconds later, and the backstop ends the process two seconds after that.
        let shutdownTimeout = config.worker.shutdownTimeout.duration
        var configuration = ServiceGroupConfiguration(
            services: [
                .init(service: NamedService(application)),
                .init(service: NamedService(ShutdownBackstop(limit: shutdownTimeout + .seconds(4), logger: logger))),
            ],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        )
        configuration.maximumGracefulShutdownDuration = shutdownTimeout + .seconds(2)
        let group = ServiceGroup(configuration: configuration)
        let (username, deadlines) = (databaseURL.username, config.database.deadlines)
        Task { await SessionLimits.warnIfMissing(on: postgres, username: username, deadlines: deadlines, logger: logger) }
        if let warning = databaseURL.sslModeWarning { logger.warning("\(warning)") }
        logger.info("reclaim serving", metadata: ["role": "\(role.rawValue)", "address": "\(host):\(port)", "database": "\(databaseURL)"])
        onReady()
        try await group.run()
    }
}
