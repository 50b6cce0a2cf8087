import Foundation

/// The HTTP body Apple posts for notifications and retention-messaging requests: `{"signedPayload": JWS}`.
public struct SignedPayloadBody: Codable, Sendable, Equatable {
    public var signedPayload: String

    public init(signedPayload: String) { self.signedPayload = signedPayload }

    /// Decodes a body, reading the form `{"signedPayload":"<JWS>"}` straight from the bytes.
    ///
    /// When the text between the quotes holds no quote, backslash, control or non-ASCII byte, it is the
    /// value exactly (JSON only rewrites text at escapes). That skips JSONDecoder's scan and copy of a 10+ KiB
    /// string on every notification. JSON's whitespace between the tokens is allowed: the bodies in Apple's
    /// sandbox corpus read `{"signedPayload": "…"}`. Any other spelling (escapes, more members) goes through
    /// JSONDecoder, so the result is the same for every input; `nil` when the body is not such an object.
    /// Whether the value is a JWS at all is the verifier's question, not this one's.
    public static func decode(_ body: some Collection<UInt8>) -> SignedPayloadBody? {
        // A collection without contiguous storage (Data, through this generic call) is copied once: still far
        // cheaper than JSONDecoder.
        let fast =
            body.withContiguousStorageIfAvailable { directForm(UnsafeRawBufferPointer($0)) }
            ?? Array(body).withUnsafeBytes { directForm($0) }
        if let fast { return fast }
        return try? JSONDecoder().decode(SignedPayloadBody.self, from: Data(body))
    }

    /// The body if it is `{"signedPayload":"<plain text>"}`, with any JSON whitespace between the tokens.
    static func directForm(_ bytes: UnsafeRawBufferPointer) -> SignedPayloadBody? {
        var reader = TokenReader(bytes: bytes)
        guard reader.expect("{"), reader.expect(#""signedPayload""#), reader.expect(":"), reader.expect(#"""#) else { return nil }
        let start = reader.index
        let end = JSONPlainText.end(of: bytes, from: start)
        reader.index = end
        guard reader.expect(#"""#), reader.expect("}"), reader.atEnd() else { return nil }
        return SignedPayloadBody(signedPayload: String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self))
    }

    /// Reads fixed tokens, skipping JSON's whitespace before each (RFC 8259 §2: space, tab, LF, CR).
    private struct TokenReader {
        let bytes: UnsafeRawBufferPointer
        var index = 0

        /// Skips whitespace, then consumes `token` if it comes next.
        mutating func expect(_ token: StaticString) -> Bool {
            skipWhitespace()
            let token = UnsafeRawBufferPointer(start: token.utf8Start, count: token.utf8CodeUnitCount)
            guard bytes.count - index >= token.count, bytes[index..<(index + token.count)].elementsEqual(token) else { return false }
            index += token.count
            return true
        }

        /// Skips whitespace; whether nothing else remains.
        mutating func atEnd() -> Bool {
            skipWhitespace()
            return index == bytes.count
        }

        private mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }
    }
}
