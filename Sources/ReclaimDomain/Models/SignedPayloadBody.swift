import Foundation

/// The HTTP body Apple posts for notifications and retention-messaging requests: `{"signedPayload": JWS}`.
public struct SignedPayloadBody: Codable, Sendable, Equatable {
    public var signedPayload: String

    public init(signedPayload: String) { self.signedPayload = signedPayload }

    /// Decodes a body, reading Apple's exact compact form `{"signedPayload":"<JWS>"}` straight from the bytes.
    ///
    /// When the text between the quotes holds no quote, backslash, control or non-ASCII byte, it is the
    /// value exactly (JSON only rewrites text at escapes). That skips JSONDecoder's scan and copy of a 10+ KiB
    /// string on every notification. Any other spelling (whitespace, escapes, more members) goes through
    /// JSONDecoder, so the result is the same for every input; `nil` when the body is not such an object.
    /// Whether the value is a JWS at all is the verifier's question, not this one's.
    public static func decode(_ body: some Collection<UInt8>) -> SignedPayloadBody? {
        // A collection without contiguous storage (Data, through this generic call) is copied once: still far
        // cheaper than JSONDecoder.
        let fast =
            body.withContiguousStorageIfAvailable { compactForm(UnsafeRawBufferPointer($0)) }
            ?? Array(body).withUnsafeBytes { compactForm($0) }
        if let fast { return fast }
        return try? JSONDecoder().decode(SignedPayloadBody.self, from: Data(body))
    }

    /// The body if it is exactly `{"signedPayload":"<plain text>"}` (then plus trailing whitespace).
    private static func compactForm(_ bytes: UnsafeRawBufferPointer) -> SignedPayloadBody? {
        let prefix = #"{"signedPayload":""#.utf8
        var end = bytes.count
        while end > 0, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x0A || bytes[end - 1] == 0x0D || bytes[end - 1] == 0x09 {
            end -= 1
        }
        guard end >= prefix.count + 2, bytes.starts(with: prefix), bytes[end - 2] == UInt8(ascii: "\""), bytes[end - 1] == UInt8(ascii: "}")
        else { return nil }
        let value = UnsafeRawBufferPointer(rebasing: bytes[prefix.count..<(end - 2)])
        guard JSONPlainText.end(of: value, from: 0) == value.count else { return nil }
        return SignedPayloadBody(signedPayload: String(decoding: value, as: UTF8.self))
    }
}
