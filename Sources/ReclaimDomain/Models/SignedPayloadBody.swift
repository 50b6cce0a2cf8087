import Foundation

/// The HTTP body Apple posts for notifications and retention-messaging requests: `{"signedPayload": JWS}`.
public struct SignedPayloadBody: Codable, Sendable, Equatable {
    public var signedPayload: String

    public init(signedPayload: String) { self.signedPayload = signedPayload }

    /// Decodes a body, reading Apple's exact compact form `{"signedPayload":"<JWS>"}` straight from the bytes.
    ///
    /// A JWS holds only base64url characters and dots, none of which JSON escapes, so when the bytes have that
    /// form the text between the quotes is the value. That skips JSONDecoder's scan and copy of a 10+ KiB
    /// string on every notification. Any other spelling (whitespace, escapes, more members) goes through
    /// JSONDecoder, so the result is the same for every input; `nil` when the body is not such an object.
    public static func decode(_ body: some Collection<UInt8>) -> SignedPayloadBody? {
        // A collection without contiguous storage (Data, through this generic call) is copied once: still far
        // cheaper than JSONDecoder.
        let fast =
            body.withContiguousStorageIfAvailable { compactForm(UnsafeRawBufferPointer($0)) }
            ?? Array(body).withUnsafeBytes { compactForm($0) }
        if let fast { return fast }
        return try? JSONDecoder().decode(SignedPayloadBody.self, from: Data(body))
    }

    /// The body if it is exactly `{"signedPayload":"<base64url and dots>"}` (then plus trailing whitespace).
    private static func compactForm(_ bytes: UnsafeRawBufferPointer) -> SignedPayloadBody? {
        let prefix = #"{"signedPayload":""#.utf8
        var end = bytes.count
        while end > 0, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x0A || bytes[end - 1] == 0x0D || bytes[end - 1] == 0x09 {
            end -= 1
        }
        guard end >= prefix.count + 2, bytes.starts(with: prefix), bytes[end - 2] == UInt8(ascii: "\""), bytes[end - 1] == UInt8(ascii: "}")
        else { return nil }
        let value = UnsafeRawBufferPointer(rebasing: bytes[prefix.count..<(end - 2)])
        // OR-ing table entries (0 for a JWS character) keeps the loop free of branches.
        let foreign = notJWSCharacter.withUnsafeBufferPointer { table in
            value.reduce(into: UInt8(0)) { $0 |= table[Int($1)] }
        }
        return foreign == 0 ? SignedPayloadBody(signedPayload: String(decoding: value, as: UTF8.self)) : nil
    }

    /// 0 for the bytes a compact JWS is made of (the base64url alphabet the segment decoder knows, and `.`),
    /// 1 for every other byte.
    private static let notJWSCharacter: [UInt8] = JWSSegmentDecoder.decodeTable.enumerated().map { byte, value in
        value != 0xFF || byte == Int(UInt8(ascii: ".")) ? 0 : 1
    }
}
