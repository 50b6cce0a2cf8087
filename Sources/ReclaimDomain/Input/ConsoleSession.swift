import Crypto
import Foundation

/// The /console session cookie: `<key id>.<expiry, UNIX seconds>.<HMAC-SHA256>`, the MAC keyed with the stored
/// SHA-256 of the API key that signed in. Every process can check it with one indexed read and no shared
/// state; revoking the key ends its sessions; the cookie never holds the key.
///
/// The cookie arrives from anyone, before any check: its expiry is parsed as digits into a bounded `Int64` and
/// MAC'd as those digits, never converted through `Double` (a `Date` round trip of 2^63 traps).
public struct ConsoleSession: Sendable, Equatable {
    public static let cookieName = "reclaim_console"
    /// How long a sign-in lasts.
    public static let lifetime: Int64 = 12 * 3600
    /// The largest expiry a cookie may name: 9999-12-31T23:59:59Z. A real one is at most `lifetime` ahead.
    public static let maximumExpiry: Int64 = 253_402_300_799

    public let keyId: UUID
    /// UNIX seconds.
    public let expiry: Int64

    public init(keyId: UUID, expiry: Int64) {
        self.keyId = keyId
        self.expiry = min(max(expiry, 0), Self.maximumExpiry)
    }

    /// A session signed in at `now`, ending `lifetime` later.
    public init(keyId: UUID, signedInAt now: Date) {
        self.init(keyId: keyId, expiry: (now.unixSecondsIfRepresentable ?? 0) + Self.lifetime)
    }

    public var expires: Date { Date(timeIntervalSince1970: TimeInterval(expiry)) }
    /// When the session was signed in (its expiry less the lifetime); sign-out ends sessions signed in until then.
    public var signedInAt: Date { Date(timeIntervalSince1970: TimeInterval(expiry - Self.lifetime)) }

    /// The cookie value for this session, MAC'd with `secret`.
    public func value(secret: [UInt8]) -> String {
        let payload = Self.payload(keyId: keyId, expiry: expiry)
        return payload + "." + Base64URL.encode(Array(Self.mac(payload, secret: secret)))
    }

    /// The key id and expiry a cookie claims, before its MAC is checked (that needs the key's secret); nil for
    /// anything not in the form this type writes: a UUID, 1 to 12 digits with no leading zero
    /// of an expiry up to ``maximumExpiry``, and a 32-byte MAC.
    public static func claimed(_ value: Substring) -> (session: ConsoleSession, payload: String, mac: [UInt8])? {
        guard value.utf8.count <= 200 else { return nil }
        let parts = value.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let keyId = UUID(uuidString: String(parts[0])), let expiry = canonicalSeconds(parts[1]),
            let mac = Base64URL.decode(parts[2]).map(Array.init), mac.count == SHA256.byteCount
        else { return nil }
        let session = ConsoleSession(keyId: keyId, expiry: expiry)
        return (session, payload(keyId: keyId, expiry: expiry), mac)
    }

    /// Whether `mac` is the MAC of `payload` under `secret`, compared in constant time.
    public static func isAuthentic(payload: String, mac: [UInt8], secret: [UInt8]) -> Bool {
        HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: Data(("reclaim-console|" + payload).utf8), using: SymmetricKey(data: secret))
    }

    /// Digits as this type writes them (no sign, no leading zero), up to ``maximumExpiry``.
    private static func canonicalSeconds(_ text: Substring) -> Int64? {
        guard (1...12).contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            text.utf8.first != 0x30 || text.utf8.count == 1, let seconds = Int64(text), seconds <= maximumExpiry
        else { return nil }
        return seconds
    }

    private static func payload(keyId: UUID, expiry: Int64) -> String {
        keyId.uuidString.lowercased() + "." + String(expiry)
    }

    private static func mac(_ payload: String, secret: [UInt8]) -> HashedAuthenticationCode<SHA256> {
        HMAC<SHA256>.authenticationCode(for: Data(("reclaim-console|" + payload).utf8), using: SymmetricKey(data: secret))
    }
}
