import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ReclaimDomain
import ReclaimStore

/// Who is calling: reads `Authorization: Bearer <key>` and returns who it belongs to (401 problem+json otherwise),
/// checks a key typed into the /console sign-in form, and a /console session cookie. App keys (`rk_app_…`) reach
/// their own app's subscribers only; admin keys (`rk_admin_…`) reach the admin API only; console keys and admin
/// keys open /console.
///
/// Rate limits, 429 with `Retry-After`: each key has its own budget of requests, and each client address a
/// budget of failed authentications (once spent, its requests are refused before any key is looked up), so
/// neither a runaway app nor a key-guessing client can take the server.
struct KeyAuthentication: Sendable {
    let postgres: Database
    let perKey: RateLimiter
    let failedAuthentication: RateLimiter
    let cache: AuthenticatedKeyCache
    /// Proxies whose `X-Forwarded-For` names the client (``TrustedProxies``).
    let proxies: TrustedProxies

    var now: @Sendable () -> Date = Date.init

    init(postgres: Database, server: ReclaimConfig.Server = ReclaimConfig.Server()) {
        self.postgres = postgres
        perKey = RateLimiter(rate: Double(server.rateLimitPerKey), burst: Double(server.rateLimitBurst))
        failedAuthentication = RateLimiter(
            rate: Double(server.failedAuthenticationsPerMinute) / 60,
            burst: Double(server.failedAuthenticationsPerMinute)
        )
        cache = AuthenticatedKeyCache(ttl: .seconds(server.keyCacheTTL.seconds))
        proxies = TrustedProxies(server.trustedProxies)
    }

    /// The app of an app key.
    func bundleId(of request: Request, context: ReclaimRequestContext) async throws -> String {
        let caller = try await caller(of: request, context: context, expecting: "app key (from `reclaim apps create-key`)")
        guard caller.scope == .app, let bundleId = caller.bundleId else { throw Problem(.unauthorized, "the key is not an app key") }
        return bundleId
    }

    /// An admin key's caller. A support or privacy key is known but may not use the admin API: 403, and the refusal
    /// is recorded in the audit log (another key kind stays a 401, as before roles).
    func admin(of request: Request, context: ReclaimRequestContext) async throws -> APIKeyStore.Caller {
        let caller = try await caller(of: request, context: context, expecting: "admin key (from `reclaim admin create-key`)")
        if caller.scope == .support || caller.scope == .privacy {
            throw await refuse(caller, request, context, needs: "an admin key (reclaim admin create-key --role admin)")
        }
        guard caller.scope == .admin else { throw Problem(.unauthorized, "the key is not an admin key") }
        return caller
    }

    /// A key that may read one subscriber's data: admin, support or privacy; another known key is refused (403), and
    /// the refusal recorded.
    func person(of request: Request, context: ReclaimRequestContext) async throws -> APIKeyStore.Caller {
        let caller = try await caller(of: request, context: context, expecting: "admin, support or privacy key (from `reclaim admin create-key`)")
        guard caller.scope.readsSubscribers else { throw await refuse(caller, request, context, needs: "an admin, support or privacy key") }
        return caller
    }

    /// 403 for a known key whose role does not cover the route, recorded in the audit log (`access.refused`).
    private func refuse(_ caller: APIKeyStore.Caller, _ request: Request, _ context: ReclaimRequestContext, needs: String) async -> Problem {
        let route = "\(request.method.rawValue) \(request.uri.path)"
        do {
            try await Audit.record(
                "access.refused",
                target: .text("route:\(route)"),
                outcome: "refused",
                detail: "a \(caller.scope.rawValue) key; it takes \(needs)",
                actor: Audit.keyActor(caller),
                database: postgres,
                logger: context.logger
            )
        } catch {
            context.logger.error("the audit log did not take a refusal", metadata: ["error": "\(String(reflecting: error))"])
        }
        return Problem(.forbidden, "a \(caller.scope.rawValue) key may not use \(route): it takes \(needs)")
    }

    /// The caller of a key typed into the /console sign-in form, under the same budget of failed
    /// authentications per client address as the `Authorization` header; nil for an unknown or revoked key.
    func signIn(key: String, request: Request, context: ReclaimRequestContext) async throws -> APIKeyStore.Caller? {
        let client = try admittedClient(request, context)
        if key.utf8.count <= Self.maxKeyBytes, let caller = try await authenticate(key, logger: context.logger) { return caller }
        let refusal = refusal(of: client, "the key is unknown or revoked")
        if refusal.status == .tooManyRequests { throw refusal }
        return nil
    }

    /// The session a /console cookie holds and its caller, when the cookie is authentic, unexpired, not signed
    /// out, and its key is still active and may see the console.
    func consoleSession(_ cookie: String, logger: Logger) async throws -> (session: ConsoleSession, caller: APIKeyStore.Caller)? {
        guard let claimed = ConsoleSession.claimed(Substring(cookie)), claimed.session.expires > now(),
            let (caller, secret, notBefore) = try await postgres.withConnection(
                logger: logger,
                { [keyId = claimed.session.keyId] in
                    try await APIKeyStore.sessionSecret(keyId: keyId, connection: $0, logger: logger)
                }
            ),
            ConsoleSession.isAuthentic(payload: claimed.payload, mac: claimed.mac, secret: secret),
            caller.scope.opensConsole
        else { return nil }
        if let notBefore, claimed.session.signedInAt < notBefore { return nil }
        return (claimed.session, caller)
    }

    /// Sign-out: `session`, and every older session of its key, no longer opens the console.
    func endConsoleSessions(_ session: ConsoleSession, logger: Logger) async throws {
        try await postgres.withConnection(logger: logger) {
            try await APIKeyStore.endConsoleSessions(keyId: session.keyId, signedInUntil: session.signedInAt, connection: $0, logger: logger)
        }
    }

    private func authenticate(_ key: String, logger: Logger) async throws -> APIKeyStore.Caller? {
        try await postgres.withConnection(logger: logger) { try await APIKeyStore.authenticate(key, connection: $0, logger: logger) }
    }

    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!

    /// Keys are 50-odd characters: anything far longer is refused before it is hashed.
    static let maxKeyBytes = 256

    /// The client's address, once it is known to have failed authentications left (429 otherwise).
    private func admittedClient(_ request: Request, _ context: ReclaimRequestContext) throws -> String {
        let client: String
        switch proxies.client(peer: context.channel.remoteAddress, forwardedFor: request.headers[values: Self.forwardedFor].joined(separator: ",")) {
        case .address(let address): client = address
        case .forwardedForTooLong:
            throw Problem(.forwardedForTooLong, "X-Forwarded-For from a trusted proxy exceeds \(TrustedProxies.maxForwardedForBytes) bytes")
        case .forwardedForUnreadable(let hop):
            throw Problem(
                .forwardedForUnreadable,
                "X-Forwarded-For from a trusted proxy holds \(LogText.bounded(hop, limit: 60)), which is not an IP address"
            )
        }
        if failedAuthentication.isLimited(client) { throw Self.limited(retryAfter: 60) }
        return client
    }

    /// A failed authentication from `client`, counted: 429 once its budget is spent, else 401 saying `detail`.
    private func refusal(of client: String, _ detail: String) -> Problem {
        if let wait = failedAuthentication.take(client) { return Self.limited(retryAfter: wait) }
        return Problem(.unauthorized, detail)
    }

    private static func limited(retryAfter: Int) -> Problem {
        Problem(.rateLimited, "too many failed authentications from this address; wait and retry", retryAfter: retryAfter)
    }

    private func caller(of request: Request, context: ReclaimRequestContext, expecting: String) async throws -> APIKeyStore.Caller {
        let client = try admittedClient(request, context)
        func refuse(_ detail: String) -> Problem { refusal(of: client, detail) }
        guard let header = request.headers[.authorization] else { throw refuse("send the \(expecting) as Authorization: Bearer <key>") }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer", parts[1].utf8.count <= Self.maxKeyBytes else {
            throw refuse("the Authorization header must be Bearer <key>")
        }
        let digest = AuthenticatedKeyCache.digest(String(parts[1]))
        let caller: APIKeyStore.Caller
        if let cached = cache.caller(for: digest) {
            caller = cached
        } else {
            guard let found = try await authenticate(String(parts[1]), logger: context.logger) else {
                throw refuse("the key is unknown or revoked")
            }
            cache.remember(found, for: digest)
            caller = found
        }
        if let wait = perKey.take(caller.keyId.uuidString) {
            throw Problem(.rateLimited, "this key's request budget is spent for now", retryAfter: wait)
        }
        return caller
    }
}
