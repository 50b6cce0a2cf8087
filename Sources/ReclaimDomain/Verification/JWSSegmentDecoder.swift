import Crypto
import Foundation

/// Splits a compact JWS and decodes its payload and signature segments, working on the UTF-8 bytes.
///
/// Verification is on the hot path of every notification: character-level `String` work (grapheme splitting,
/// `replacingOccurrences` through NSString) cost several times the ECDSA verification itself. This accepts
/// exactly what ``Base64URL/decode(_:)`` accepts, in one pass over contiguous bytes, finds the dots with
/// `memchr`, and hashes the signing input where it lies instead of copying it.
enum JWSSegmentDecoder {
    /// The segments of a compact JWS: the header as sent (so verified headers can be remembered by their
    /// exact bytes and not decoded again), payload and signature decoded.
    struct Segments {
        /// The header segment's base64url text.
        let headerSegment: Data
        let payload: Data
        let signature: Data
        /// SHA-256 of the bytes the signature covers: the ASCII text `header.payload` exactly as received.
        let signingInputDigest: SHA256.Digest
    }

    /// Splits `compactJWS`, decodes payload and signature, and hashes the signing input.
    static func decode(_ compactJWS: String) throws(JWSVerificationError) -> Segments {
        try split(compactJWS) { bytes, dots throws(JWSVerificationError) in
            let payload = try payload(bytes, dots)
            guard let signature = decodeBase64URL(UnsafeBufferPointer(rebasing: bytes[(dots.1 + 1)...])) else {
                throw JWSVerificationError(.malformed, "the signature segment is not base64url")
            }
            return Segments(
                headerSegment: Data(UnsafeBufferPointer(rebasing: bytes[..<dots.0])),
                payload: payload,
                signature: signature,
                signingInputDigest: SHA256.hash(data: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[..<dots.1])))
            )
        }
    }

    /// Only the decoded payload, for a JWS whose bytes an enclosing signature already authenticated.
    static func decodePayload(_ compactJWS: String) throws(JWSVerificationError) -> Data {
        try split(compactJWS) { bytes, dots throws(JWSVerificationError) in
            // The signature segment must still be base64url, so a mangled nested JWS is refused here too.
            guard decodeBase64URL(UnsafeBufferPointer(rebasing: bytes[(dots.1 + 1)...])) != nil else {
                throw JWSVerificationError(.malformed, "the signature segment is not base64url")
            }
            return try payload(bytes, dots)
        }
    }

    /// Runs `body` on the UTF-8 bytes of a JWS with exactly two dots and three non-empty segments.
    private static func split<T>(
        _ compactJWS: String,
        _ body: (UnsafeBufferPointer<UInt8>, (Int, Int)) throws(JWSVerificationError) -> T
    ) throws(JWSVerificationError) -> T {
        var text = compactJWS
        // `withUTF8` makes the storage contiguous (a no-op for native strings) so the work below runs on raw bytes.
        let result: Result<T, JWSVerificationError> = text.withUTF8 { bytes in
            var dots: [Int] = []
            var from = 0
            while dots.count < 3, from < bytes.count, let base = bytes.baseAddress,
                let found = memchr(base + from, Int32(UInt8(ascii: ".")), bytes.count - from)
            {
                let index = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                dots.append(index)
                from = index + 1
            }
            guard dots.count == 2 else {
                let found = dots.count < 2 ? "\(dots.count + 1)" : "more than 3"
                return .failure(JWSVerificationError(.malformed, "a compact JWS has 3 segments separated by '.', found \(found)"))
            }
            guard dots[0] > 0, dots[1] > dots[0] + 1, dots[1] < bytes.count - 1 else {
                return .failure(JWSVerificationError(.malformed, "a JWS segment is empty"))
            }
            do throws(JWSVerificationError) {
                return .success(try body(bytes, (dots[0], dots[1])))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private static func payload(_ bytes: UnsafeBufferPointer<UInt8>, _ dots: (Int, Int)) throws(JWSVerificationError) -> Data {
        guard let payload = decodeBase64URL(UnsafeBufferPointer(rebasing: bytes[(dots.0 + 1)..<dots.1])) else {
            throw JWSVerificationError(.malformed, "the payload segment is not base64url")
        }
        return payload
    }

    /// Decodes base64url text held in `Data`.
    static func decodeBase64URL(_ text: Data) -> Data? {
        text.withUnsafeBytes { decodeBase64URL($0.bindMemory(to: UInt8.self)) }
    }

    /// Decodes base64url, with or without `=` padding; `nil` for anything else (including the standard alphabet's
    /// `+` and `/`, which a conforming signer never emits, whitespace, and a last character with unused bits set).
    static func decodeBase64URL(_ input: UnsafeBufferPointer<UInt8>) -> Data? {
        var end = input.count
        if end > 0, input[end - 1] == UInt8(ascii: "=") {
            guard input.count % 4 == 0 else { return nil }
            end -= 1
            if end > 0, input[end - 1] == UInt8(ascii: "=") { end -= 1 }
        }
        let remainder = end % 4
        // One leftover character carries only 6 bits: not a whole byte, so not base64.
        guard remainder != 1 else { return nil }
        let quadsEnd = end - remainder
        var output = Data(count: quadsEnd / 4 * 3 + (remainder == 0 ? 0 : remainder - 1))
        let valid = decodeTable.withUnsafeBufferPointer { table in
            output.withUnsafeMutableBytes { raw in
                let out = raw.bindMemory(to: UInt8.self)
                // Invalid characters map to 0xFF; OR-ing everything and testing the top bits once keeps the loop branch-free.
                var seen: UInt8 = 0
                var read = 0
                var write = 0
                while read < quadsEnd {
                    let a = table[Int(input[read])]
                    let b = table[Int(input[read + 1])]
                    let c = table[Int(input[read + 2])]
                    let d = table[Int(input[read + 3])]
                    seen |= a | b | c | d
                    let group = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                    out[write] = UInt8(truncatingIfNeeded: group >> 16)
                    out[write + 1] = UInt8(truncatingIfNeeded: group >> 8)
                    out[write + 2] = UInt8(truncatingIfNeeded: group)
                    read += 4
                    write += 3
                }
                // The last character's bits past the final byte carry nothing and must be zero (RFC 4648 §3.5, the
                // canonical encoding): otherwise one JWS has 16 spellings, which Apple's libraries refuse (PyJWT's
                // "Invalid crypto padding", scripts/check-apple-library).
                var unused: UInt8 = 0
                if remainder >= 2 {
                    let a = table[Int(input[read])]
                    let b = table[Int(input[read + 1])]
                    let c = remainder == 3 ? table[Int(input[read + 2])] : 0
                    seen |= a | b | c
                    unused = remainder == 3 ? c & 0x03 : b & 0x0F
                    let group = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6
                    out[write] = UInt8(truncatingIfNeeded: group >> 16)
                    if remainder == 3 { out[write + 1] = UInt8(truncatingIfNeeded: group >> 8) }
                }
                return seen & 0xC0 == 0 && unused == 0
            }
        }
        return valid ? output : nil
    }

    /// Value of each base64url character, 0xFF for every other byte.
    static let decodeTable: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8.enumerated() {
            table[Int(character)] = UInt8(value)
        }
        return table
    }()
}
