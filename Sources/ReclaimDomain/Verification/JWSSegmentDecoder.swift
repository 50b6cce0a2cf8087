import Foundation

/// Splits a compact JWS and decodes its payload and signature segments, working on the UTF-8 bytes.
///
/// Verification is on the hot path of every notification: character-level `String` work (grapheme splitting,
/// `replacingOccurrences` through NSString) cost several times the ECDSA verification itself. This accepts
/// exactly what ``Base64URL/decode(_:)`` accepts, in one pass over contiguous bytes.
enum JWSSegmentDecoder {
    /// The segments of a compact JWS: the header as sent (so verified headers can be remembered by their
    /// exact bytes and not decoded again), payload and signature decoded.
    struct Segments {
        /// The header segment's base64url text (a slice of `signingInput`).
        let headerSegment: Data
        let payload: Data
        let signature: Data
        /// The bytes the signature covers: the ASCII text `header.payload` exactly as received.
        let signingInput: Data
    }

    static func decode(_ compactJWS: String) throws(JWSVerificationError) -> Segments {
        var text = compactJWS
        // `withUTF8` makes the storage contiguous (a no-op for native strings) so the loops below run on raw bytes.
        let result: Result<Segments, JWSVerificationError> = text.withUTF8 { bytes in
            // Found by scanning raw bytes; a third dot is looked for only to reject it.
            var dots: [Int] = []
            var index = 0
            while index < bytes.count, dots.count < 3 {
                if bytes[index] == UInt8(ascii: ".") { dots.append(index) }
                index += 1
            }
            guard dots.count == 2 else {
                return .failure(
                    JWSVerificationError(
                        .malformed,
                        "a compact JWS has 3 segments separated by '.', found \(dots.count < 2 ? "\(dots.count + 1)" : "more than 3")"
                    )
                )
            }
            let ranges = [0..<dots[0], (dots[0] + 1)..<dots[1], (dots[1] + 1)..<bytes.count]
            guard ranges.allSatisfy({ !$0.isEmpty }) else {
                return .failure(JWSVerificationError(.malformed, "a JWS segment is empty"))
            }
            guard let payload = decodeBase64URL(UnsafeBufferPointer(rebasing: bytes[ranges[1]])) else {
                return .failure(JWSVerificationError(.malformed, "the payload segment is not base64url"))
            }
            guard let signature = decodeBase64URL(UnsafeBufferPointer(rebasing: bytes[ranges[2]])) else {
                return .failure(JWSVerificationError(.malformed, "the signature segment is not base64url"))
            }
            let signingInput = Data(UnsafeBufferPointer(rebasing: bytes[0..<dots[1]]))
            // The header stays encoded, a slice of the signing input: it is decoded (and checked) only when it
            // is not a header that verified before.
            return .success(
                Segments(
                    headerSegment: signingInput.prefix(dots[0]),
                    payload: payload,
                    signature: signature,
                    signingInput: signingInput
                )
            )
        }
        return try result.get()
    }

    /// Decodes base64url text held in `Data`.
    static func decodeBase64URL(_ text: Data) -> Data? {
        text.withUnsafeBytes { decodeBase64URL($0.bindMemory(to: UInt8.self)) }
    }

    /// Decodes base64url, with or without `=` padding; `nil` for anything else (including the standard alphabet's
    /// `+` and `/`, which a conforming signer never emits, and whitespace).
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
                if remainder >= 2 {
                    let a = table[Int(input[read])]
                    let b = table[Int(input[read + 1])]
                    let c = remainder == 3 ? table[Int(input[read + 2])] : 0
                    seen |= a | b | c
                    let group = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6
                    out[write] = UInt8(truncatingIfNeeded: group >> 16)
                    if remainder == 3 { out[write + 1] = UInt8(truncatingIfNeeded: group >> 8) }
                }
                return seen & 0xC0 == 0
            }
        }
        return valid ? output : nil
    }

    /// Value of each base64url character, 0xFF for every other byte.
    private static let decodeTable: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8.enumerated() {
            table[Int(character)] = UInt8(value)
        }
        return table
    }()
}
