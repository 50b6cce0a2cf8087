import Hummingbird
import HummingbirdCore
import Logging
import ReclaimDomain
import ReclaimStore
import ServiceLifecycle

/// Builds the router for `role`. Tests call this with their own dependencies.
public func buildRouter(_ dependencies: Dependencies, role: ServerRole = .all) -> Router<ReclaimRequestContext> {
    let router = Router(context: ReclaimRequestContext.self)
    // Request counts and latency histograms per route, method and status (hb_requests, http_server_request_duration).
    router.add(middleware: MetricsMiddleware())
    router.add(middleware: RequestIdMiddleware())
    router.add(middleware: ProblemMiddleware())
    router.add(middleware: LogRequestsMiddleware(.debug))
    router.add(middleware: StartupGateMiddleware(gate: dependencies.startupGate, timeout: dependencies.config.database.deadlines.acquire))
    HealthRoutes(
        postgres: dependencies.postgres,
        liveness: dependencies.liveness,
        startupGate: dependencies.startupGate,
        stops: dependencies.appStops
    )
    .register(on: router)
    MetricsRoute(registry: dependencies.metricsRegistry).register(on: router)
    OpenAPIRoute().register(on: router)
    if role.servesAPI {
        let server = dependencies.config.server
        AppleNotificationRoutes(ingest: NotificationIngest(dependencies: dependencies), maxBodyBytes: server.maxBodyBytes).register(on: router)
        RetentionMessagingRoutes(retention: RetentionMessaging(dependencies: dependencies), maxBodyBytes: server.maxBodyBytes).register(on: router)

        let keys = KeyAuthentication(postgres: dependencies.postgres, server: server)
        let delivery = OfferDelivery(
            postgres: dependencies.postgres,
            issuer: dependencies.issuer,
            liveOffers: dependencies.liveOffers,
            stops: dependencies.appStops
        )
        let apps = router.group().add(middleware: KeyAuthenticator(authentication: keys, scope: .app))
        OfferRoutes(
            delivery: delivery,
            userTokens: dependencies.userTokens,
            proof: TransactionProof(verifier: dependencies.verifier, apps: dependencies.config.appIdentities),
            accountTokens: AccountTokenRepairs(postgres: dependencies.postgres, config: dependencies.config)
        ).register(on: apps)
        OfferEventRoutes(delivery: delivery).register(on: apps)
        CancelFlowRoutes(
            service: CancelFlowService(
                postgres: dependencies.postgres,
                issuer: dependencies.issuer,
                campaigns: dependencies.campaigns.of(CancelFlowCampaign.self),
                reasons: dependencies.config.apps.reduce(into: [:]) { reasons, app in reasons[app.bundleId] = app.cancelReasons },
                stops: dependencies.appStops,
                deadline: dependencies.cancelFlowDeadline
            ),
            userTokens: dependencies.userTokens,
            proof: TransactionProof(verifier: dependencies.verifier, apps: dependencies.config.appIdentities)
        ).register(on: apps)
        let admin = router.group().add(middleware: KeyAuthenticator(authentication: keys, scope: .admin))
        SubscriberRoutes(postgres: dependencies.postgres).register(
            on: router.group().add(middleware: KeyAuthenticator(authentication: keys, scope: .people))
        )
        GrantRoutes(
            grants: GrantService(
                postgres: dependencies.postgres,
                issuer: dependencies.issuer,
                budgets: dependencies.config.apps.reduce(into: [:]) { budgets, app in budgets[app.bundleId] = app.discountBudget?.domain }
            ),
            extensions: ExtensionGrants(postgres: dependencies.postgres, config: dependencies.config),
            audit: dependencies.postgres,
            stops: dependencies.appStops
        ).register(on: admin)
        ConsoleRoutes(
            dashboard: ConsoleDashboard(postgres: dependencies.postgres, apps: dependencies.config.apps),
            authentication: keys,
            stops: dependencies.appStops
        ).register(
            on: router
        )
    }
    return router
}

/// Builds the whole application for `role`: router, HTTP server and the background services
/// (PostgreSQL pool first, since every other service depends on it).
public func buildApplication(
    _ dependencies: Dependencies,
    role: ServerRole,
    host: String,
    port: Int,
    extraServices: [any Service] = []
) -> some ApplicationProtocol {
    let router = buildRouter(dependencies, role: role)
    let server = dependencies.config.server
    return Application(
        router: router,
        server: httpServer(server),
        configuration: .init(
            address: .hostname(host, port: port),
            serverName: "reclaim",
            // Past the limit the server stops accepting (the kernel's backlog holds the rest) instead of
            // letting a flood of idle connections exhaust file descriptors and memory.
            availableConnectionsDelegate: MaximumAvailableConnections(server.maxConnections, logger: dependencies.logger)
        ),
        // Named by type only: ServiceGroup's debug lines print each service's description (NamedService).
        services: ([dependencies.postgres.client] + extraServices).map(NamedService.init),
        logger: dependencies.logger
    )
}

/// The HTTP/1 server with Reclaim's edge settings: the idle timeout, the header and body deadlines
/// (``RequestDeadlineHandler``), and a lingering close after a refused body (``LingeringClose``). Tests that run a router on a real socket use it too.
public func httpServer(_ server: ReclaimConfig.Server) -> HTTPServerBuilder {
    .http1(
        configuration: .init(
            // An autoclosure: evaluated for each connection, so each gets its own handler.
            additionalChannelHandlers: [
                LingeringCloseInstaller(),
                RequestDeadlineHandler(headerTimeout: .seconds(server.headerTimeout.seconds), bodyTimeout: .seconds(server.bodyTimeout.seconds)),
            ],
            idleTimeout: .seconds(server.idleTimeout.seconds)
        )
    )
}
