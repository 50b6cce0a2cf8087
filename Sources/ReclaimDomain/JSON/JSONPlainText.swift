/// Finds where a JSON string's plain text ends: the first byte that is a quote, a backslash, a control
/// character or not ASCII. Up to there the bytes are the string's value exactly, since JSON only rewrites
/// text at escapes.
///
/// Eight bytes at a time while none is special (the classic "has a zero byte" and "has a byte less than
/// n" bit tricks, exact for "any"): the strings that matter here are JWS of 5–20 KB.
enum JSONPlainText {
    /// The index of the first special byte at or after `start`, or `bytes.count` if there is none.
    static func end(of bytes: UnsafeRawBufferPointer, from start: Int) -> Int {
        var index = start
        while index + 8 <= bytes.count, !hasSpecialByte(bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)) {
            index += 8
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 || byte >= 0x80 { return index }
            index += 1
        }
        return index
    }

    private static func hasSpecialByte(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let quote = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
        let backslash = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
        let zeroInQuote = (quote &- ones) & ~quote
        let zeroInBackslash = (backslash &- ones) & ~backslash
        let control = (word &- ones &* 0x20) & ~word
        return (zeroInQuote | zeroInBackslash | control | word) & highs != 0
    }
}
