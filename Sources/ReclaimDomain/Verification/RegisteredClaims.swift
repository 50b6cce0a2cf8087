import Foundation

/// The JWT registered claims (RFC 7519 §4.1) a verified payload may carry, refused as Apple's own libraries refuse
/// them. Apple documents none of them in its signed payloads, but its libraries decode every payload with PyJWT's
/// `jwt.decode` (app-store-server-library-python `signed_data_verifier.py`) and so refuse one that is expired (`exp`),
/// not yet valid (`nbf`, or `iat` in the future), addressed to an audience (`aud`), or whose `sub` or `jti` is not a
/// string. Reclaim accepting such a payload where Apple's reference refuses it would be the weaker check of the two
/// (scripts/check-apple-library compares them).
///
/// Every Apple payload is checked, so the common case costs one pass over its bytes: the JSON is parsed only when
/// one of the claim names appears as a quoted string, or a `\u` escape could spell one.
enum RegisteredClaims {
    static func check(_ payload: Data, now: Date) throws(JWSVerificationError) {
        guard mayHoldClaim(payload) else { return }
        guard let object = try? JSONSerialization.jsonObject(with: payload) as? [String: Any] else { return }
        let seconds = now.timeIntervalSince1970
        // PyJWT reads each time claim with Python's int(): a number (truncated) or a string of digits.
        func time(_ name: String) throws(JWSVerificationError) -> Double? {
            guard let value = object[name] else { return nil }
            if let number = value as? NSNumber, !(value is String) { return number.doubleValue.rounded(.towardZero) }
            if let text = value as? String, let number = Int64(text.trimmingCharacters(in: .whitespaces)) { return Double(number) }
            throw JWSVerificationError(.malformed, "the payload's \(name) claim is not an integer")
        }
        if let iat = try time("iat"), iat > seconds {
            throw JWSVerificationError(.malformed, "the payload's iat claim (\(iat)) is in the future")
        }
        if let nbf = try time("nbf"), nbf > seconds {
            throw JWSVerificationError(.malformed, "the payload's nbf claim (\(nbf)) is in the future: not yet valid")
        }
        if let exp = try time("exp"), exp <= seconds {
            throw JWSVerificationError(.malformed, "the payload's exp claim (\(exp)) has passed: it has expired")
        }
        if let aud = object["aud"], isTruthy(aud) {
            throw JWSVerificationError(.malformed, "the payload names an audience (aud); Apple's payloads name none")
        }
        for name in ["sub", "jti"] where object[name] != nil && !(object[name] is String) {
            throw JWSVerificationError(.malformed, "the payload's \(name) claim is not a string")
        }
    }

    /// Python's truth of a JSON value, as PyJWT tests `aud`: null, false, 0, "", [] and {} are false.
    private static func isTruthy(_ value: Any) -> Bool {
        switch value {
        case is NSNull: return false
        case let text as String: return !text.isEmpty
        case let array as [Any]: return !array.isEmpty
        case let object as [String: Any]: return !object.isEmpty
        case let number as NSNumber: return number.doubleValue != 0
        default: return true
        }
    }

    /// Whether the bytes hold `"exp"`, `"nbf"`, `"iat"`, `"aud"`, `"sub"` or `"jti"`, or a `\u` escape.
    static func mayHoldClaim(_ payload: Data) -> Bool {
        payload.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var index = 0
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\\"):
                    if index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") { return true }
                    index += 2
                    continue
                case UInt8(ascii: "\""):
                    if index + 4 < bytes.count, bytes[index + 4] == UInt8(ascii: "\"") {
                        let name = (bytes[index + 1], bytes[index + 2], bytes[index + 3])
                        if names.contains(where: { $0 == name }) { return true }
                    }
                default: break
                }
                index += 1
            }
            return false
        }
    }

    private static let names: [(UInt8, UInt8, UInt8)] = ["exp", "nbf", "iat", "aud", "sub", "jti"].map {
        let bytes = Array($0.utf8)
        return (bytes[0], bytes[1], bytes[2])
    }
}
