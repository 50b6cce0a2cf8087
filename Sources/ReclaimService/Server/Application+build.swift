import Hummingbird
import HummingbirdCore
import Logging
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
    HealthRoutes(postgres: dependencies.postgres, liveness: dependencies.liveness).register(on: router)
    MetricsRoute(registry: dependencies.metricsRegistry).register(on: router)
    OpenAPIRoute().register(on: router)
    if role.servesAPI {
        AppleNotificationRoutes(ingest: NotificationIngest(dependencies: dependencies), maxBodyBytes: dependencies.config.server.maxBodyBytes)
            .register(on: router)
        let keys = KeyAuthentication(keys: APIKeyStore(postgres: dependencies.postgres), server: dependencies.config.server)
        OfferRoutes(
            delivery: OfferDelivery(postgres: dependencies.postgres, signers: dependencies.signers),
            authentication: keys,
            userTokens: dependencies.userTokens
        )
        .register(on: router)
        OfferEventRoutes(postgres: dependencies.postgres, authentication: keys).register(on: router)
        ConsoleRoutes(postgres: dependencies.postgres, keys: APIKeyStore(postgres: dependencies.postgres), authentication: keys)
            .register(on: router)
        GrantRoutes(postgres: dependencies.postgres, config: dependencies.config, signers: dependencies.signers, authentication: keys)
            .register(on: router)
        RetentionMessagingRoutes(
            verifier: dependencies.verifier,
            config: dependencies.config,
            postgres: dependencies.postgres,
            signers: dependencies.signers,
            maxBodyBytes: dependencies.config.server.maxBodyBytes
        ).register(on: router)
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
        services: [dependencies.postgres.client] + extraServices,
        logger: dependencies.logger
    )
}

/// The HTTP/1 server with Reclaim's edge settings: the idle timeout, and the header and body deadlines
/// (``RequestDeadlineHandler``). Tests that run a router on a real socket use it too.
public func httpServer(_ server: ReclaimConfig.Server) -> HTTPServerBuilder {
    .http1(
        configuration: .init(
            // An autoclosure: evaluated for each connection, so each gets its own handler.
            additionalChannelHandlers: [
                RequestDeadlineHandler(headerTimeout: .seconds(server.headerTimeout.seconds), bodyTimeout: .seconds(server.bodyTimeout.seconds))
            ],
            idleTimeout: .seconds(server.idleTimeout.seconds)
        )
    )
}
