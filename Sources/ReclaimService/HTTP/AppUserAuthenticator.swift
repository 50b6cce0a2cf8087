import Foundation
import HTTPTypes
import Hummingbird
import ReclaimDomain

/// The app user a request is for: one of the app key's app's users, named by the appAccountToken the app sets on
/// its purchases. Put in the request context by ``AppUserAuthenticator`` before the route runs.
struct AppUser: Sendable, Equatable {
    let bundleId: String
    let appAccountToken: UUID
}

/// The authentication of the routes that answer for one app user (`GET /v1/offers`), behind ``KeyAuthenticator``
/// `.app`: the `appAccountToken` query parameter names the user; an app that requires user tokens must also send
/// `X-Reclaim-User-Token`, made by its backend for that appAccountToken (``UserTokenVerifier``), else 401
/// `invalid-user-token` and the route never runs. The route reads the user with ``ReclaimRequestContext/appUser()``.
///
/// A missing token is refused before the parameter is read (an unauthenticated request learns nothing of what it
/// should have sent); a token is checked against the parameter, so a malformed parameter is refused first then.
struct AppUserAuthenticator: RouterMiddleware {
    typealias Context = ReclaimRequestContext

    /// Apps that require a user token, by bundle id.
    let userTokens: [String: UserTokenVerifier]
    var now: @Sendable () -> Date = Date.init

    static let userTokenHeader = HTTPField.Name("X-Reclaim-User-Token")!
    /// Tokens are `<expiry>.<43 base64url characters>`: anything far longer is refused before it is parsed.
    static let maxUserTokenBytes = 200

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let bundleId = try context.appBundleId()
        let verifier = userTokens[bundleId]
        let userToken = request.headers[Self.userTokenHeader]
        if verifier != nil {
            guard let userToken, userToken.utf8.count <= Self.maxUserTokenBytes else {
                throw Problem(.invalidUserToken, "this app requires an X-Reclaim-User-Token from its backend")
            }
        }
        guard let text = request.uri.queryParameters["appAccountToken"] else {
            throw Problem(.missingParameter, "appAccountToken is required: the UUID the app sets on its purchases")
        }
        guard let appAccountToken = OfferRequestInput.uuid(text) else {
            throw Problem(.invalidParameter, "appAccountToken must be a UUID such as 6f1d2c3b-0000-4000-8000-000000000051")
        }
        if let verifier, let userToken, let problem = verifier.problem(with: userToken, appAccountToken: appAccountToken, now: now()) {
            throw Problem(.invalidUserToken, problem)
        }
        var context = context
        context.user = AppUser(bundleId: bundleId, appAccountToken: appAccountToken)
        return try await next(request, context)
    }
}

extension AppUserAuthenticator {
    /// For a route that names the user elsewhere than the query (a lookup's parameter, a body): the request's
    /// `X-Reclaim-User-Token` must be the one the app's backend made for `appAccountToken`. 401 `invalid-user-token`
    /// with `missing` when it is absent or far too long, with the verifier's reason when it is wrong.
    static func requireUserToken(
        _ request: Request,
        for appAccountToken: UUID,
        verifier: UserTokenVerifier,
        missing: String,
        now: Date = Date()
    ) throws {
        guard let userToken = request.headers[userTokenHeader], userToken.utf8.count <= maxUserTokenBytes else {
            throw Problem(.invalidUserToken, missing)
        }
        if let problem = verifier.problem(with: userToken, appAccountToken: appAccountToken, now: now) { throw Problem(.invalidUserToken, problem) }
    }
}

extension ReclaimRequestContext {
    /// The app user this request is for (a route behind ``AppUserAuthenticator``).
    func appUser() throws -> AppUser {
        guard let user else { throw Problem(.unauthorized, "an app user is required") }
        return user
    }
}
