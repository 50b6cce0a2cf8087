import Foundation
import ReclaimDomain
import Synchronization

/// The App Store Server API's bearer token: an ES256 JWT with header `{"alg":"ES256","kid":<key id>,"typ":"JWT"}`
/// and claims `iss` (issuer id), `iat`, `exp`, `aud` "appstoreconnect-v1", `bid`, as
/// Apple's *Generating JSON Web Tokens for API requests* (App Store Server API) lists them.
///
/// Apple accepts tokens that expire at most 60 minutes after they were issued. One token serves every request
/// for `lifetime` minus a margin, then a new one is made: no request waits on signing, and none carries a
/// token about to expire in flight.
final class AppStoreBearerToken: Sendable {
    struct Claims: Encodable, Equatable {
        let iss: String
        let iat: Int64
        let exp: Int64
        let aud: String
        let bid: String
    }

    let key: SigningKey
    let issuerId: String
    let bundleId: String
    /// How long each token is valid (Apple's limit is 60 minutes).
    let lifetime: TimeInterval
    /// A token is replaced this long before it expires.
    let renewalMargin: TimeInterval = 60
    private let cached = Mutex<(token: String, expires: Date)?>(nil)

    init(key: SigningKey, issuerId: String, bundleId: String, lifetime: TimeInterval = 20 * 60) {
        precondition(lifetime > 60 && lifetime <= 3600, "Apple accepts tokens valid for at most 60 minutes")
        self.key = key
        self.issuerId = issuerId
        self.bundleId = bundleId
        self.lifetime = lifetime
    }

    /// The current token, made anew when none is cached or the cached one expires within the margin.
    func token(now: Date = Date()) throws -> String {
        try cached.withLock { cached in
            if let cached, cached.expires.timeIntervalSince(now) > renewalMargin { return cached.token }
            let issued = Int64(now.timeIntervalSince1970)
            let claims = Claims(iss: issuerId, iat: issued, exp: issued + Int64(lifetime), aud: "appstoreconnect-v1", bid: bundleId)
            let token = try CompactJWSSigner.sign(claims, with: key)
            cached = (token, Date(timeIntervalSince1970: TimeInterval(claims.exp)))
            return token
        }
    }
}
