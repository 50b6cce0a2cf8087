import Foundation

/// Base64url without padding (RFC 7515 §2), the encoding of every JWS segment.
public enum Base64URL {
    /// Encodes bytes as base64url without `=` padding.
    ///
    /// Maps the standard alphabet's bytes in one pass: `replacingOccurrences` goes through NSString and cost
    /// more than the signature when a JWS payload is several KiB.
    public static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        let base64 = Data(bytes).base64EncodedData()
        return base64.withUnsafeBytes { raw in
            var length = raw.count
            while length > 0, raw[length - 1] == UInt8(ascii: "=") { length -= 1 }
            return String(unsafeUninitializedCapacity: length) { output in
                for index in 0..<length {
                    switch raw[index] {
                    case UInt8(ascii: "+"): output[index] = UInt8(ascii: "-")
                    case UInt8(ascii: "/"): output[index] = UInt8(ascii: "_")
                    case let byte: output[index] = byte
                    }
                }
                return length
            }
        }
    }

    /// Decodes base64url, with or without padding; `nil` when the text is not base64url in its canonical form
    /// (the standard alphabet's `+` and `/`, whitespace, or unused bits set in the last character). One decoder for
    /// every JWS segment and token: ``JWSSegmentDecoder``'s.
    public static func decode<Text: StringProtocol>(_ text: Text) -> Data? {
        var text = String(text)
        return text.withUTF8 { JWSSegmentDecoder.decodeBase64URL($0) }
    }
}
