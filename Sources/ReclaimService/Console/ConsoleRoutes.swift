import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Mustache
import NIOCore
import ReclaimDomain
import ReclaimStore

/// `/console`: the funnel and the queue at a glance, rendered on the server from the dashboard views.
///
/// Sign-in takes an admin key (every app) or a console key (its app, or every app when it has none) and sets a
/// session cookie (``ConsoleSession``: HttpOnly, SameSite=Strict, path /console; Secure behind an HTTPS proxy
/// that says so in `X-Forwarded-Proto`). The page only reads; the two forms (sign in, sign out) refuse
/// cross-origin posts.
struct ConsoleRoutes: Sendable {
    let dashboard: ConsoleDashboard
    let authentication: KeyAuthentication
    /// The apps stopped (`reclaim stop`), named at the top of the dashboard.
    let stops: AppStops
    var refreshSeconds = 30
    var now: @Sendable () -> Date = Date.init

    /// A sign-in form holds one key; anything longer is not one.
    static let maxFormBytes = 4096

    /// The page and sign-out behind ``ConsoleSessionAuthenticator``; sign-in, which reads no session, without it.
    func register(on router: Router<ReclaimRequestContext>) {
        let sessions = router.group().add(middleware: ConsoleSessionAuthenticator(authentication: authentication))
        sessions.get("/console") { request, context in try await page(request, context: context) }
        sessions.get("/console/subscriber") { request, context in try await subscriber(request, context: context) }
        sessions.get("/console/audit") { request, context in try await auditPage(request, context: context) }
        router.post("/console/session") { request, context in try await signIn(request, context: context) }
        sessions.post("/console/logout") { request, context in try await signOut(request, context: context) }
    }

    private func page(_ request: Request, context: ReclaimRequestContext) async throws -> Response {
        let caller: APIKeyStore.Caller
        switch context.consoleSession {
        case nil: return Self.login(message: nil, status: .ok)
        case .ended:
            var response = Self.login(message: "Your session ended (it expired, or its key was revoked). Sign in again.", status: .ok)
            response.setCookie(Self.cookie(value: "", maxAge: 0, request: request))
            return response
        case .signedIn(_, let signedIn): caller = signedIn
        }
        // A privacy key reads one subscriber's story and erases it: it has no reports to see.
        if caller.scope == .privacy { return Self.redirect(to: "/console/subscriber") }
        let bundleId = ConsoleDashboard.bundleId(of: caller)
        let environment = dashboard.environment(asked: request.uri.queryParameters["environment"].map(String.init))
        let report = try await dashboard.report(for: caller, environment: environment, logger: context.logger)
        let html = ConsoleTemplates.library.render(
            ConsolePage(
                report: report,
                bundleId: bundleId,
                environment: environment,
                now: now(),
                refresh: refreshSeconds,
                searchesSubscribers: caller.scope.readsSubscribers,
                readsAudit: caller.scope == .admin,
                stops: await stops.current(logger: context.logger).values
                    .filter { bundleId == nil || $0.bundleId == bundleId }
                    .sorted { $0.bundleId < $1.bundleId }
                    .map { "\($0.bundleId) is stopped since \($0.stoppedAt.formatted(.iso8601)) by \($0.stoppedBy): \($0.reason)" }
            ),
            withTemplate: "page"
        )
        return Self.html(html ?? "", status: .ok)
    }

    /// One subscriber's story, searched by original transaction id or appAccountToken: admin keys, and support and
    /// privacy keys (of their app when they have one); each read is in the audit log.
    private func subscriber(_ request: Request, context: ReclaimRequestContext) async throws -> Response {
        guard case .signedIn(_, let caller) = context.consoleSession else { return Self.redirect() }
        let query = request.uri.queryParameters["id"].map(String.init)?.trimmingCharacters(in: .whitespaces) ?? ""
        let asked = request.uri.queryParameters["app"].map(String.init)?.trimmingCharacters(in: .whitespaces) ?? ""
        func render(_ page: ConsoleSubscriberPage, _ status: HTTPResponse.Status) -> Response {
            Self.html(ConsoleTemplates.library.render(page, withTemplate: "subscriber") ?? "", status: status)
        }
        guard caller.scope.readsSubscribers else {
            let message =
                "Looking up a subscriber takes an admin key (or a support or privacy key): it shows one person's data, where a console key sees counts."
            await audit("subscriber.read", target: nil, outcome: "refused", detail: "a console key", caller: caller, context: context)
            return render(ConsoleSubscriberPage(query: query, app: asked, message: message, story: nil), .forbidden)
        }
        // A key of one app reads that app's subscribers only.
        if let only = caller.bundleId, caller.scope != .admin, !asked.isEmpty, asked != only {
            let message = "This key reads the subscribers of \(only) only."
            await audit(
                "subscriber.read",
                target: nil,
                outcome: "refused",
                detail: "app \(asked) outside the key's",
                caller: caller,
                context: context
            )
            return render(ConsoleSubscriberPage(query: query, app: asked, message: message, story: nil), .forbidden)
        }
        let app = caller.scope == .admin ? asked : (caller.bundleId ?? asked)
        guard !query.isEmpty else { return render(ConsoleSubscriberPage(query: "", app: app, story: nil), .ok) }
        guard let identifier = SubscriberLookup.Identifier(parsing: query) else {
            let message = "Enter an original transaction id (digits) or an appAccountToken (a UUID)."
            return render(ConsoleSubscriberPage(query: query, app: app, message: message, story: nil), .badRequest)
        }
        let lookup = SubscriberLookup(identifier, bundleId: app.isEmpty ? nil : app)
        let story = try await dashboard.postgres.withConnection(logger: context.logger) {
            try await SubscriberStore.story(lookup, connection: $0, logger: context.logger)
        }
        context.logger.notice("console subscriber lookup", metadata: ["key": "\(caller.keyId)"])
        await audit(
            "subscriber.read",
            target: .subscriber(lookup.auditIdentifier),
            outcome: "ok",
            detail: app.isEmpty ? nil : "app \(app)",
            caller: caller,
            context: context
        )
        return render(ConsoleSubscriberPage(query: query, app: app, story: story), .ok)
    }

    private func signIn(_ request: Request, context: ReclaimRequestContext) async throws -> Response {
        if let refusal = Self.crossOrigin(request) { return refusal }
        guard request.headers[.contentType]?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true else {
            throw Problem(.unsupportedMediaType, "sign in with the form at /console (application/x-www-form-urlencoded)")
        }
        let body = try await request.body.collect(upTo: Self.maxFormBytes)
        guard let key = Self.formValue("key", in: String(buffer: body)), !key.isEmpty else {
            return Self.login(message: "Enter a key.", status: .badRequest)
        }
        let caller: APIKeyStore.Caller?
        do {
            caller = try await authentication.signIn(key: key, request: request, context: context)
        } catch let problem as Problem where problem.status == .tooManyRequests {
            var response = Self.login(message: "Too many failed sign-ins from this address. Wait a minute and retry.", status: .tooManyRequests)
            if let wait = problem.retryAfter { response.headers[.retryAfter] = "\(wait)" }
            return response
        }
        guard let caller else {
            let unknown = AuditLog.Actor(kind: .key, name: "unknown key")
            await audit("console.sign-in", actor: unknown, outcome: "refused", detail: "unknown or revoked key", context: context)
            return Self.login(message: "That key is unknown or revoked.", status: .unauthorized)
        }
        guard caller.scope.opensConsole else {
            await audit("console.sign-in", target: nil, outcome: "refused", detail: "an app key", caller: caller, context: context)
            return Self.login(message: "App keys cannot open the console: use an admin, support, privacy or console key.", status: .forbidden)
        }
        await audit("console.sign-in", target: nil, outcome: "ok", detail: nil, caller: caller, context: context)
        // The key's stored hash, which later requests read back with APIKeyStore.sessionSecret: no query needed here.
        let secret = Array(AuthenticatedKeyCache.digest(key))
        let session = ConsoleSession(keyId: caller.keyId, signedInAt: now())
        context.logger.notice("console sign-in", metadata: ["key": "\(caller.keyId)", "scope": "\(caller.scope.rawValue)"])
        var response = Self.redirect()
        response.setCookie(Self.cookie(value: session.value(secret: secret), maxAge: Int(ConsoleSession.lifetime), request: request))
        return response
    }

    /// Clears the cookie and ends the session server-side: a copy of the cookie no longer opens the console.
    private func signOut(_ request: Request, context: ReclaimRequestContext) async throws -> Response {
        if let refusal = Self.crossOrigin(request) { return refusal }
        if case .signedIn(let session, let caller) = context.consoleSession {
            try await authentication.endConsoleSessions(session, logger: context.logger)
            context.logger.notice("console sign-out", metadata: ["key": "\(caller.keyId)"])
        }
        var response = Self.redirect()
        response.setCookie(Self.cookie(value: "", maxAge: 0, request: request))
        return response
    }

    /// `/console/audit`: the newest entries of the audit log (admin keys only), filtered like `reclaim audit`.
    private func auditPage(_ request: Request, context: ReclaimRequestContext) async throws -> Response {
        guard case .signedIn(_, let caller) = context.consoleSession else { return Self.redirect() }
        func parameter(_ name: String) -> String? {
            request.uri.queryParameters[Substring(name)].map { String($0).trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
        }
        guard caller.scope == .admin else {
            await audit("audit.read", target: nil, outcome: "refused", detail: "a \(caller.scope.rawValue) key", caller: caller, context: context)
            let page = ConsoleAuditPage(filter: .init(), rows: [], message: "The audit log takes an admin key.")
            return Self.html(ConsoleTemplates.library.render(page, withTemplate: "audit") ?? "", status: .forbidden)
        }
        let filter = AuditLog.Filter(action: parameter("action"), actor: parameter("actor"), target: parameter("target"), limit: 200)
        let rows = try await dashboard.postgres.withConnection(logger: context.logger) { connection in
            var filter = filter
            if let target = filter.target, AuditTasks.isSubscriberIdentifier(target) {
                filter.target = try await AuditLog.pseudonym(subscriber: target, connection: connection, logger: context.logger)
            }
            return try await AuditLog.list(filter, connection: connection, logger: context.logger)
        }
        return Self.html(ConsoleTemplates.library.render(ConsoleAuditPage(filter: filter, rows: rows), withTemplate: "audit") ?? "", status: .ok)
    }

    /// Records a console action of a signed-in key; a failure to record is logged, the page still answers.
    private func audit(
        _ action: String,
        target: Audit.Target?,
        outcome: String,
        detail: String?,
        caller: APIKeyStore.Caller,
        context: ReclaimRequestContext
    ) async {
        await audit(action, actor: Audit.keyActor(caller), target: target, outcome: outcome, detail: detail, context: context)
    }

    private func audit(
        _ action: String,
        actor: AuditLog.Actor,
        target: Audit.Target? = nil,
        outcome: String,
        detail: String?,
        context: ReclaimRequestContext
    ) async {
        do {
            try await Audit.record(
                action,
                target: target,
                outcome: outcome,
                detail: detail,
                actor: actor,
                database: dashboard.postgres,
                logger: context.logger
            )
        } catch {
            context.logger.error(
                "the audit log did not take a console action",
                metadata: ["action": "\(action)", "error": "\(String(reflecting: error))"]
            )
        }
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
        // Not no-referrer: under that policy a browser sends `Origin: null` even with a same-origin form post.
        headers[HTTPField.Name("Referrer-Policy")!] = "same-origin"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// 303 to the page: the browser then GETs it, so a reload never re-posts the form.
    static func redirect(to path: String = "/console") -> Response {
        var response = html("", status: .seeOther)
        response.headers[.location] = path
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

    /// 403 for a form posted from anywhere but this site's own pages.
    ///
    /// A browser says where a POST comes from. `Sec-Fetch-Site` (Fetch Metadata, which no page can set) decides
    /// where it is sent: only `same-origin` (or `none`, a user's own navigation) passes. Older browsers send only
    /// `Origin` (`null` from a sandboxed frame, a `data:` page, a redirect chain or a no-referrer page: never this
    /// form, whose pages use `Referrer-Policy: same-origin`) and `Referer`. A request with none of them is not from
    /// a browser (curl, a script), so no one's cookie rides on it.
    static func crossOrigin(_ request: Request) -> Response? {
        let refused = login(message: "Cross-origin sign-ins are refused.", status: .forbidden)
        if let site = request.headers[Self.secFetchSite]?.lowercased() {
            return site == "same-origin" || site == "none" ? nil : refused
        }
        if let origin = request.headers[.origin] {
            return isSameOrigin(origin, request: request) ? nil : refused
        }
        if let referer = request.headers[.referer] {
            return isSameOrigin(referer, request: request) ? nil : refused
        }
        return nil
    }

    static let secFetchSite = HTTPField.Name("Sec-Fetch-Site")!

    /// Whether a URL (an `Origin` or a `Referer`) names this server's own authority; `null` never does. Hosts
    /// compare without case, ports when both name one (an origin's left out is its scheme's default); a `Host`
    /// without a port (as proxies and some clients send it) says nothing of the port, so the host decides.
    private static func isSameOrigin(_ text: String, request: Request) -> Bool {
        guard let authority = request.head.authority, text != "null", let url = URL(string: text), let urlHost = url.host?.lowercased(),
            let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https"
        else { return false }
        let defaultPort = scheme == "https" ? 443 : 80
        let urlPort = url.port ?? defaultPort
        // `Host` is `name[:port]`; an IPv6 literal keeps its brackets, which URL.host drops.
        var host = Substring(authority.lowercased())
        var hostPort: Int?
        if let colon = host.lastIndex(of: ":"), !host[colon...].contains("]") {
            hostPort = Int(host[host.index(after: colon)...])
            guard hostPort != nil else { return false }
            host = host[..<colon]
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        guard host == urlHost else { return false }
        return hostPort.map { $0 == urlPort } ?? true
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
