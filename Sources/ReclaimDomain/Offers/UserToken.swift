import Crypto
import Foundation

/// A short-lived token an app's own backend signs for one of its users, so that only that user's app can fetch
/// that user's offers (an appAccountToken alone may be guessed or leaked).
///
/// Form: `<expiry>.<mac>`, where expiry is UNIX seconds and mac is the unpadded base64url HMAC-SHA256, keyed
/// with the app's secret, of `<appAccountToken, lowercase>.<expiry>`. Valid until expiry, which may be at most
/// ``maximumLifetime`` ahead. Comparison is constant-time (`HMAC.isValidAuthenticationCode`).
public struct UserTokenVerifier: Sendable {
    /// Tokens valid for longer are refused: a leaked token must not work for long.
    public static let maximumLifetime: TimeInterval = 24 * 3600

    let key: SymmetricKey
    /// The secret being rotated out: its tokens stay valid until it is removed (at most a token's lifetime after
    /// every backend signs with the new one).
    let previousKey: SymmetricKey?

    public init(secret: Data, previousSecret: Data? = nil) {
        key = SymmetricKey(data: secret)
        previousKey = previousSecret.map { SymmetricKey(data: $0) }
    }

    /// Why a token is refused, in words; nil when it is valid for `appAccountToken` at `now`.
    public func problem(with token: String, appAccountToken: UUID, now: Date) -> String? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let expiry = Int64(parts[0]), let mac = Base64URL.decode(String(parts[1])) else {
            return "the user token must be <expiry>.<base64url HMAC-SHA256>"
        }
        let seconds = now.timeIntervalSince1970
        guard Double(expiry) > seconds else { return "the user token expired" }
        guard Double(expiry) <= seconds + Self.maximumLifetime else { return "the user token is valid for more than 24 hours" }
        let message = Data("\(appAccountToken.lowercaseString).\(expiry)".utf8)
        let valid =
            HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: message, using: key)
            || previousKey.map { HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: message, using: $0) } == true
        guard valid else {
            return "the user token was not made for this appAccountToken with this app's secret"
        }
        return nil
    }

    /// A token for `appAccountToken` valid until `expiry` (what an app backend makes; for tests and tools).
    public func token(for appAccountToken: UUID, expiry: Int64) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data("\(appAccountToken.lowercaseString).\(expiry)".utf8), using: key)
        return "\(expiry).\(Base64URL.encode(Array(mac)))"
    }
}
