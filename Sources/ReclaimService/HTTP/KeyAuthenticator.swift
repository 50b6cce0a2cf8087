import Foundation
import Hummingbird
import ReclaimStore

/// Who made an authenticated request: put in the request context by ``KeyAuthenticator`` before the route runs.
enum Caller: Sendable {
    /// An app key (`rk_app_…`): its own app's subscribers only.
    case app(bundleId: String)
    /// An admin key (`rk_admin_…`): the admin API only. Its caller names it in the audit log.
    case admin(APIKeyStore.Caller)
    /// An admin, support or privacy key: one subscriber's data (data-subject requests).
    case person(APIKeyStore.Caller)
}

/// The authentication of a group of routes: the `Authorization: Bearer` key must be of `scope`, else 401 (or 429)
/// problem+json and the route never runs. The routes read the caller from the context
/// (``ReclaimRequestContext/appBundleId()``, ``ReclaimRequestContext/adminKeyId()``).
struct KeyAuthenticator: RouterMiddleware {
    typealias Context = ReclaimRequestContext

    enum Scope: Sendable { case app, admin, people }

    let authentication: KeyAuthentication
    let scope: Scope

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        switch scope {
        case .app: context.caller = .app(bundleId: try await authentication.bundleId(of: request, context: context))
        case .admin: context.caller = .admin(try await authentication.admin(of: request, context: context))
        case .people: context.caller = .person(try await authentication.person(of: request, context: context))
        }
        return try await next(request, context)
    }
}

extension ReclaimRequestContext {
    /// The app of the app key that authenticated this request (a route behind ``KeyAuthenticator`` `.app`).
    func appBundleId() throws -> String {
        guard case .app(let bundleId)? = caller else { throw Problem(.unauthorized, "an app key is required") }
        return bundleId
    }

    /// The admin key that authenticated this request (a route behind ``KeyAuthenticator`` `.admin`).
    func adminKeyId() throws -> UUID { try admin().keyId }

    /// The admin, support or privacy key that authenticated this request (a route behind ``KeyAuthenticator`` `.people`).
    func person() throws -> APIKeyStore.Caller {
        guard case .person(let caller)? = caller else { throw Problem(.unauthorized, "an admin, support or privacy key is required") }
        return caller
    }

    /// The admin key that authenticated this request, with its name.
    func admin() throws -> APIKeyStore.Caller {
        guard case .admin(let caller)? = caller else { throw Problem(.unauthorized, "an admin key is required") }
        return caller
    }
}
