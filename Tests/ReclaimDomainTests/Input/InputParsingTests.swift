import Foundation
import ReclaimDomain
import ReclaimTestSupport
import Testing

/// The parsers of outside input on the values that trapped or misled before issue 26.
@Suite("Parsers of outside input: extreme values are refused, never trapped on", .poolWatchdog)
struct InputParsingTests {
    static let keyId = "00000000-0000-0000-0000-000000000000"
    static let mac = String(repeating: "A", count: 43)

    @Test(
        "console cookies with extreme or non-canonical expiries are refused",
        arguments: [
            "9223372036854775807", "9223372036854775296", "9223372036854775808", "-9223372036854775808", "-1", "+1764043200",
            "01764043200", "253402300800", "1e308", "NaN", "", String(repeating: "9", count: 10_000),
        ]
    )
    func extremeCookieExpiries(expiry: String) {
        #expect(ConsoleSession.claimed(Substring("\(Self.keyId).\(expiry).\(Self.mac)")) == nil)
    }

    @Test("a console cookie round-trips and its MAC binds the expiry as written")
    func cookieRoundTrip() throws {
        let secret = Array("secret".utf8)
        let session = ConsoleSession(keyId: UUID(), signedInAt: Date(timeIntervalSince1970: 1_764_000_000))
        #expect(session.expiry == 1_764_000_000 + ConsoleSession.lifetime)
        let claimed = try #require(ConsoleSession.claimed(Substring(session.value(secret: secret))))
        #expect(claimed.session == session)
        #expect(ConsoleSession.isAuthentic(payload: claimed.payload, mac: claimed.mac, secret: secret))
        #expect(claimed.session.signedInAt == Date(timeIntervalSince1970: 1_764_000_000))
        #expect(ConsoleSession.claimed("\(Self.keyId).\(ConsoleSession.maximumExpiry).\(Self.mac)")?.session.expiry == ConsoleSession.maximumExpiry)
        // A MAC of another length is not one this type writes.
        #expect(ConsoleSession.claimed("\(Self.keyId).1764043200.AA") == nil)
    }

    @Test(
        "durations: overflowing, negative, signed or too long texts are not durations",
        arguments: ["106751991167301d", "9223372036854775807w", "9223372036854775807s", "-1s", "+5s", "-0s", "36526d", "5", "d", "", "1.5h"]
    )
    func refusedDurations(text: String) {
        #expect(DurationText.seconds(text) == nil)
    }

    @Test("durations: the units, and the bound")
    func durations() {
        #expect(DurationText.seconds("90s") == 90)
        #expect(DurationText.seconds("30m") == 1800)
        #expect(DurationText.seconds("12h") == 43_200)
        #expect(DurationText.seconds("7d") == 604_800)
        #expect(DurationText.seconds("2w") == 1_209_600)
        #expect(DurationText.seconds("0s") == 0)
        #expect(DurationText.seconds("36525d") == DurationText.maximumSeconds)
    }

    @Test("Apple's millisecond dates beyond year 9999 are clamped, and stay representable")
    func millisecondDates() {
        for ms in [Int64.max, Int64.min, 9_223_372_036_854_775_000, -9_223_372_036_854_775_000] {
            let date = Date(unixMilliseconds: ms)
            #expect(abs(date.timeIntervalSince1970) <= 253_402_300_800)
            #expect(date.unixSecondsIfRepresentable != nil)
        }
        #expect(Date(unixMilliseconds: 1_764_000_000_123).timeIntervalSince1970 == 1_764_000_000.123)
    }

    @Test("log text: control characters and line separators escaped, length bounded")
    func logText() {
        #expect(LogText.escaped("ES256\ncritical forged") == "ES256\\ncritical forged")
        #expect(LogText.escaped("a\rb\u{2028}c\u{1B}[31md\u{85}e\u{202E}f") == "a\\rb\\u{2028}c\\u{1B}[31md\\u{85}e\\u{202E}f")
        #expect(LogText.escaped("plain text, ünïcode ✓") == "plain text, ünïcode ✓")
        let long = LogText.bounded(String(repeating: "A", count: 180_000), limit: 40)
        #expect(long == String(repeating: "A", count: 40) + "…(179960 more)")
    }

    static let grantBody: [String: String] = [
        "bundleId": "com.example.app", "originalTransactionId": "2000000000000001", "productId": "com.example.monthly",
        "offerIdentifier": "referral", "reason": "referral", "campaign": "referral-2026",
    ]

    static func grant(_ changes: [String: String?] = [:]) throws -> GrantRequest {
        var body = grantBody
        for (key, value) in changes { body[key] = value }
        return try GrantRequest(body: JSONSerialization.data(withJSONObject: body))
    }

    @Test("grant requests: the deliverableFor that trapped is refused with the reason")
    func grantDurationOverflow() throws {
        #expect(throws: InvalidInput("deliverableFor must be a duration from 1s to 90d, e.g. 7d")) {
            try Self.grant(["deliverableFor": "106751991167301d"])
        }
        #expect(throws: InvalidInput.self) { try Self.grant(["environment": "Xcode"]) }
    }

    @Test("grant fingerprints: every field counts, defaults are normalized")
    func grantFingerprints() throws {
        let base = try Self.grant().fingerprint
        #expect(try Self.grant(["deliverableFor": "7d"]).fingerprint == base, "7d is the default")
        #expect(try Self.grant(["deliverableFor": "1w"]).fingerprint == base, "1w is 7d")
        #expect(try Self.grant(["deliverableFor": "14d"]).fingerprint != base)
        #expect(try Self.grant(["environment": "Sandbox"]).fingerprint != base)
        #expect(try Self.grant(["reason": "other"]).fingerprint != base)
        #expect(try Self.grant(["appAccountToken": "6f1d2c3b-0000-4000-8000-000000000051"]).fingerprint != base)
        // Length prefixes: moving text from one field to the next is another request.
        #expect(try Self.grant(["reason": "ab", "campaign": "c"]).fingerprint != (try Self.grant(["reason": "a", "campaign": "bc"]).fingerprint))
    }

    @Test("Idempotency-Key: 1 to 200 visible ASCII characters")
    func idempotencyKeys() {
        #expect(GrantRequest.isValidIdempotencyKey("grant-0001"))
        #expect(!GrantRequest.isValidIdempotencyKey(""))
        #expect(!GrantRequest.isValidIdempotencyKey(String(repeating: "k", count: 201)))
        #expect(!GrantRequest.isValidIdempotencyKey("two words"))
        #expect(!GrantRequest.isValidIdempotencyKey("ключ"))
    }
}
