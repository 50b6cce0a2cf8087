import Foundation
import Hummingbird
import ServiceLifecycle
import Synchronization

/// Opens once, when the config has been mirrored into the database (``ConfigSync``): until then
/// `reclaim.outbound_targets` may not list this config's targets, and a notification stored, or an offer issued,
/// would queue no forward and no webhook for them. So requests that write (``StartupGateMiddleware``) and the
/// background writers (``GatedService``) wait for it; `/readyz` says not ready meanwhile.
///
/// A gate made open is for routers built without a server around them (tests that mirror the targets themselves).
public final class StartupGate: Sendable {
    private let opened: Atomic<Bool>
    /// Wakes the waiters when the gate opens (the workers' wake-up signal: a waiter that looked before the
    /// opening and sleeps after it is still woken).
    private let signal = WakeUpSignal()

    public init(open: Bool) {
        opened = Atomic(open)
    }

    public var isOpen: Bool { opened.load(ordering: .acquiring) }

    public func open() {
        opened.store(true, ordering: .releasing)
        signal.wakeAll()
    }

    /// Whether the gate opened within `timeout` (false also when the task was cancelled first).
    public func wait(upTo timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !isOpen && !Task.isCancelled {
            let generation = signal.generation
            let left = deadline - .now
            guard left > .zero else { return false }
            if isOpen { break }
            await signal.wait(after: generation, timeout: left)
        }
        return isOpen
    }

    /// Returns when the gate is open, or when the task is cancelled.
    public func wait() async {
        while !(await wait(upTo: .seconds(3600))) && !Task.isCancelled {}
    }
}

/// Holds every request but the health, metrics and API-document routes until the gate opens (at start-up, the
/// few milliseconds ConfigSync takes), answering 503 `starting` (Apple and clients retry) when it has not opened
/// within `timeout`: the database is then not answering, and the request could not have been served anyway.
struct StartupGateMiddleware<Context: RequestContext>: RouterMiddleware {
    let gate: StartupGate
    let timeout: Duration

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if gate.isOpen || startupUngatedPaths.contains(request.uri.path) { return try await next(request, context) }
        guard await gate.wait(upTo: timeout) else {
            throw Problem(.starting, "the configuration is not yet mirrored into the database (is PostgreSQL reachable?)")
        }
        return try await next(request, context)
    }
}

/// What ``StartupGateMiddleware`` never holds: these write nothing, and orchestrators ask them during start-up.
private let startupUngatedPaths: Set<String> = ["/healthz", "/readyz", "/metrics", "/openapi.yaml"]

/// Runs `service` once the gate has opened: the background writers (workers, outbound sender, refresher,
/// reconciliation) start only when the targets their events are queued for are mirrored.
struct GatedService: Service {
    let gate: StartupGate
    let service: any Service

    func run() async throws {
        await cancelWhenGracefulShutdown { await gate.wait() }
        guard gate.isOpen, !Task.isCancelledOrShuttingDown else {
            // Shut down before the gate opened: nothing ran, nothing to stop. A service that returns early must
            // not end the group, so wait for the shutdown that is under way.
            try? await gracefulShutdown()
            return
        }
        try await service.run()
    }
}
