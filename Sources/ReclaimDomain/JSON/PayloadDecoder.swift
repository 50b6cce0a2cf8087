import Foundation

/// Decodes the JSON payloads of Apple's JWS into Reclaim's models, with `JSONDecoder`'s results.
///
/// Apple writes its payloads in plain JSON: ASCII strings without escapes, integers, no duplicate keys.
/// ``TapeDecoder`` reads exactly that. `JSONDecoder` was a fifth of the time of verifying a notification;
/// with the tape, `scripts/bench verify` went from 10,136 to 11,709 JWS/s on the same day. Whatever it
/// declines — another spelling of JSON, a type mismatch, a missing field, invalid input — is decoded by `JSONDecoder`, so
/// the value or the error is always the one `JSONDecoder` gives. A test holds the two to that on the
/// real notifications and on crafted edge cases.
public enum PayloadDecoder {
    public static func decode<T: Decodable>(_ type: T.Type, from json: Data) throws -> T {
        if let value = fastDecode(type, from: json) { return value }
        // The tape declines every escape, so only this slower path can meet `\u0000`, which no database column holds.
        if let path = StorableText.nulPath(inJSON: json) { throw StorableText.nulRefusal(path) }
        return try JSONDecoder().decode(type, from: json)
    }

    /// The tape decoder's result, `nil` where it leaves the payload to `JSONDecoder`.
    public static func fastDecode<T: Decodable>(_ type: T.Type, from json: Data) -> T? {
        guard let tape = json.withUnsafeBytes({ JSONTape.scan($0) }) else { return nil }
        return try? TapeDecoder(document: TapeDecoder.Document(bytes: json, tape: tape.values), index: 0).decode(type)
    }
}
