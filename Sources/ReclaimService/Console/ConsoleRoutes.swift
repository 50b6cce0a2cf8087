import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Mustache
import NIOCore
import PostgresNIO
import ReclaimStore

/// `/console`: the funnel and the queue at a glance, rendered on the server from the dashboard views.
///
/// Sign-in takes an admin key (every app) or a console key (its app, or every app when it has none) and sets a
/// session cookie (``ConsoleSession``: HttpOnly, SameSite=Strict, path /console; Secure behind an HTTPS proxy
/// that says so in `X-Forwarded-Proto`). The page only reads; the two forms (sign in, sign out) refuse
/// cross-origin posts.
struct ConsoleRoutes: Sendable {
    let postgres: PostgresClient
    let keys: APIKeyStore
    let authentication: KeyAuthentication
    var refreshSeconds = 30
    var now: @Sendable () -> Date = Date.init

    /// A sign-in form holds one key; anything longer is not one.
    static let maxFormBytes = 4096

    func register(on router: Router<ReclaimRequestContext>) {
        router.get("/console") { request, context in try await page(request, context: context) }
        router.post("/console/session") { request, context in try await signIn(request, context: context) }
        router.post("/console/logout") { request, context in try signOut(request, context: context) }
    }

    private func page(_ request: Request, context: ReclaimRequestContext) async throws -> Response {
        guard let cookie = request.cookies[ConsoleSession.cookieName]?.value else { return Self.login(message: nil, status: .ok) }
        guard let caller = try await session(cookie, logger: context.logger) else {
            var response = Self.login(message: "Your session ended (it expired, or its key was revoked). Sign in again.", status: .ok)
            response.setCookie(Self.cookie(value: "", maxAge: 0, request: request))
            return response
        }
        let bundleId = caller.scope == .admin ? nil : caller.bundleId
        let report = try await ConsoleReport.load(bundleId: bundleId, postgres: postgres, logger: context.logger)
        let html = ConsoleTemplates.library.render(
            ConsolePage(report: report, bundleId: bundleId, now: now(), refresh: refreshSeconds),
            withTemplate: "page"
        )
        return Self.html(html ?? "", status: .ok)
    }

    /// The caller of a valid, unexpired session whose key is still active and may see the console.
    private func session(_ value: String, logger: Logger) async throws -> APIKeyStore.Caller? {
        guard let claimed = ConsoleSession.claimed(Substring(value)), claimed.session.expires > now(),
            let (caller, secret) = try await keys.sessionSecret(keyId: claimed.session.keyId, logger: logger),
            ConsoleSession.isAuthentic(payload: claimed.payload, mac: claimed.mac, secret: secret),
            caller.scope == .admin || caller.scope == .console
        else { return nil }
        return caller
    }

    private func signIn(_ request: Request, context: ReclaimRequestContext) async throws -> Response {
        if let refusal = Self.crossOrigin(request) { return refusal }
        guard request.headers[.contentType]?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true else {
            throw Problem(
                .unsupportedMediaType,
                "unsupported-media-type",
                title: "Unsupported media type",
                detail: "sign in with the form at /console (application/x-www-form-urlencoded)"
            )
        }
        let body = try await request.body.collect(upTo: Self.maxFormBytes)
        guard let key = Self.formValue("key", in: String(buffer: body)), !key.isEmpty else {
            return Self.login(message: "Enter a key.", status: .badRequest)
        }
        let caller: APIKeyStore.Caller?
        do {
            caller = try await authentication.signIn(key: key, context: context)
        } catch let problem as Problem where problem.status == .tooManyRequests {
            var response = Self.login(message: "Too many failed sign-ins from this address. Wait a minute and retry.", status: .tooManyRequests)
            if let wait = problem.retryAfter { response.headers[.retryAfter] = "\(wait)" }
            return response
        }
        guard let caller else { return Self.login(message: "That key is unknown or revoked.", status: .unauthorized) }
        guard caller.scope == .admin || caller.scope == .console else {
            return Self.login(message: "App keys cannot open the console: use an admin key or a console key.", status: .forbidden)
        }
        // The key's stored hash, which later requests read back with APIKeyStore.sessionSecret: no query needed here.
        let secret = Array(AuthenticatedKeyCache.digest(key))
        let session = ConsoleSession(keyId: caller.keyId, expires: now().addingTimeInterval(ConsoleSession.lifetime))
        context.logger.notice("console sign-in", metadata: ["key": "\(caller.keyId)", "scope": "\(caller.scope.rawValue)"])
        var response = Self.redirect()
        response.setCookie(Self.cookie(value: session.value(secret: secret), maxAge: Int(ConsoleSession.lifetime), request: request))
        return response
    }

    private func signOut(_ request: Request, context: ReclaimRequestContext) throws -> Response {
        if let refusal = Self.crossOrigin(request) { return refusal }
        var response = Self.redirect()
        response.setCookie(Self.cookie(value: "", maxAge: 0, request: request))
        return response
    }

    // MARK: Responses

    static func login(message: String?, status: HTTPResponse.Status) -> Response {
        struct Login {
            let title = "Reclaim console: sign in"
            let message: String?
        }
        return html(ConsoleTemplates.library.render(Login(message: message), withTemplate: "login") ?? "", status: status)
    }

    /// The headers every console page carries: no script may run, nothing may frame it, nothing is cached.
    static func html(_ text: String, status: HTTPResponse.Status) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        headers[.contentSecurityPolicy] =
            "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// 303 to the page: the browser then GETs it, so a reload never re-posts the form.
    static func redirect() -> Response {
        var response = html("", status: .seeOther)
        response.headers[.location] = "/console"
        return response
    }

    static func cookie(value: String, maxAge: Int, request: Request) -> Cookie {
        let https = request.headers[HTTPField.Name("X-Forwarded-Proto")!]?.lowercased() == "https"
        return Cookie(
            name: ConsoleSession.cookieName,
            value: value,
            maxAge: maxAge,
            path: "/console",
            secure: https,
            httpOnly: true,
            sameSite: .strict
        )
    }

    /// 403 for a form posted from another origin (a browser sends `Origin` with every POST).
    static func crossOrigin(_ request: Request) -> Response? {
        guard let origin = request.headers[.origin], origin != "null" else { return nil }
        guard let host = request.head.authority, let url = URL(string: origin), let originHost = url.host else {
            return login(message: "Cross-origin sign-ins are refused.", status: .forbidden)
        }
        let originAuthority = url.port.map { "\(originHost):\($0)" } ?? originHost
        return originAuthority == host || originHost == host ? nil : login(message: "Cross-origin sign-ins are refused.", status: .forbidden)
    }

    /// The first value of `name` in an `application/x-www-form-urlencoded` body ('+' is a space).
    static func formValue(_ name: String, in body: String) -> String? {
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0] == name else { continue }
            return String(parts[1]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
        }
        return nil
    }
}
