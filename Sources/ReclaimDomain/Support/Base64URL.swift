import Foundation

/// Base64url without padding (RFC 7515 §2), the encoding of every JWS segment.
public enum Base64URL {
    /// Encodes bytes as base64url without `=` padding.
    public static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Decodes base64url, with or without padding; `nil` when the text is not base64url.
    public static func decode<Text: StringProtocol>(_ text: Text) -> Data? {
        var base64 = String(text)
        // Refuse the standard alphabet's characters: a JWS segment that uses them was not made by a conforming signer.
        if base64.contains(where: { $0 == "+" || $0 == "/" }) { return nil }
        base64 = base64.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        if base64.hasSuffix("=") {
            guard base64.count % 4 == 0 else { return nil }
        } else {
            base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        }
        return Data(base64Encoded: base64)
    }
}
