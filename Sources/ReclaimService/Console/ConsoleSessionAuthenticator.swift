import Hummingbird
import ReclaimDomain
import ReclaimStore

/// What a request's /console session cookie is worth, as ``ConsoleSessionAuthenticator`` found it.
enum ConsoleSessionState: Sendable {
    /// A valid session: authentic, unexpired, not signed out, and its key is still active and may see the console.
    case signedIn(session: ConsoleSession, caller: APIKeyStore.Caller)
    /// A cookie that no longer opens the console (it expired, was signed out, its key was revoked, or it is forged).
    case ended
}

/// The authentication of the /console routes that act for a signed-in user (the page and sign-out): reads the
/// session cookie (``KeyAuthentication/consoleSession(_:logger:)``) and puts what it is worth in the context
/// (``ReclaimRequestContext/consoleSession``; nil without a cookie). It refuses nothing: without a session the
/// page answers the sign-in form, which is the console's way of saying 401.
struct ConsoleSessionAuthenticator: RouterMiddleware {
    typealias Context = ReclaimRequestContext

    let authentication: KeyAuthentication

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let cookie = request.cookies[ConsoleSession.cookieName]?.value else { return try await next(request, context) }
        var context = context
        if let (session, caller) = try await authentication.consoleSession(cookie, logger: context.logger) {
            context.consoleSession = .signedIn(session: session, caller: caller)
        } else {
            context.consoleSession = .ended
        }
        return try await next(request, context)
    }
}
