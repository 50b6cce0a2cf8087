import Crypto
import Foundation
import ReclaimDomain

/// The /console session cookie: `<key id>.<expiry, UNIX seconds>.<HMAC-SHA256>`, the MAC keyed with the stored
/// SHA-256 of the API key that signed in. Every process can check it with one indexed read and no shared
/// state; revoking the key ends its sessions; the cookie never holds the key.
struct ConsoleSession: Sendable, Equatable {
    static let cookieName = "reclaim_console"
    /// How long a sign-in lasts.
    static let lifetime: TimeInterval = 12 * 3600

    let keyId: UUID
    let expires: Date

    /// The cookie value for this session, MAC'd with `secret`.
    func value(secret: [UInt8]) -> String {
        let payload = Self.payload(keyId: keyId, expires: expires)
        return payload + "." + Base64URL.encode(Array(Self.mac(payload, secret: secret)))
    }

    /// The key id and expiry a cookie claims, before its MAC is checked (that needs the key's secret).
    static func claimed(_ value: Substring) -> (session: ConsoleSession, payload: String, mac: [UInt8])? {
        let parts = value.split(separator: ".", omittingEmptySubsequences: false)
        guard value.utf8.count <= 200, parts.count == 3, let keyId = UUID(uuidString: String(parts[0])), let seconds = Int64(parts[1]),
            let mac = Base64URL.decode(parts[2]).map(Array.init)
        else { return nil }
        let session = ConsoleSession(keyId: keyId, expires: Date(timeIntervalSince1970: TimeInterval(seconds)))
        return (session, payload(keyId: keyId, expires: session.expires), mac)
    }

    /// Whether `mac` is the MAC of `payload` under `secret`, compared in constant time.
    static func isAuthentic(payload: String, mac: [UInt8], secret: [UInt8]) -> Bool {
        HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: Data(("reclaim-console|" + payload).utf8), using: SymmetricKey(data: secret))
    }

    private static func payload(keyId: UUID, expires: Date) -> String {
        keyId.uuidString.lowercased() + "." + String(Int64(expires.timeIntervalSince1970))
    }

    private static func mac(_ payload: String, secret: [UInt8]) -> HashedAuthenticationCode<SHA256> {
        HMAC<SHA256>.authenticationCode(for: Data(("reclaim-console|" + payload).utf8), using: SymmetricKey(data: secret))
    }
}
