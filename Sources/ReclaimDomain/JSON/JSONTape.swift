import Foundation

/// A strict one-pass scan of JSON into a flat list of its values (a "tape"), for ``TapeDecoder``.
///
/// It reads the subset of JSON that Apple's signed payloads are written in: objects, arrays, integers,
/// `true`, `false`, `null`, and strings of printable ASCII without escapes. Anything outside that subset,
/// valid JSON or not (an escape, a fraction, a non-ASCII byte, nesting deeper than ``maxDepth``), makes
/// ``scan(_:)`` return `nil`, and the caller falls back to `JSONDecoder`, which then decides. So the tape
/// never has to agree with `JSONDecoder` on anything but the plain cases, which a test checks it does.
struct JSONTape {
    enum Kind: UInt8 {
        case object, array, string, number, `true`, `false`, null
    }

    /// One value. Strings and numbers are the byte range `start..<end` of their text (a string without its
    /// quotes); an object's members follow it on the tape as key, value, key, value…, an array's elements
    /// as values, `count` of them (members for an object).
    struct Value {
        var kind: Kind
        var start: Int32
        var end: Int32
        var count: Int32
        /// The tape index just past this value and everything inside it.
        var next: Int32
        /// A string's first byte (nil when empty), so that most key comparisons end without touching the bytes.
        var first: UInt8? = nil
    }

    /// Deeper nesting than this is left to `JSONDecoder` (Apple's payloads nest two levels).
    static let maxDepth = 32

    let values: [Value]

    /// The tape of `bytes`, or `nil` when they are not JSON of the subset described above.
    static func scan(_ bytes: UnsafeRawBufferPointer) -> JSONTape? {
        // Offsets are stored as Int32 to keep the tape small; payloads are kilobytes.
        guard bytes.count < Int(Int32.max) else { return nil }
        var scanner = Scanner(bytes: bytes)
        guard scanner.value(depth: 0) else { return nil }
        scanner.skipWhitespace()
        guard scanner.position == bytes.count else { return nil }
        return JSONTape(values: scanner.values)
    }

    private struct Scanner {
        let bytes: UnsafeRawBufferPointer
        var position = 0
        var values: [Value] = []

        init(bytes: UnsafeRawBufferPointer) {
            self.bytes = bytes
            values.reserveCapacity(64)
        }

        var current: UInt8? { position < bytes.count ? bytes[position] : nil }

        mutating func skipWhitespace() {
            while position < bytes.count {
                switch bytes[position] {
                case 0x20, 0x0A, 0x0D, 0x09: position += 1
                default: return
                }
            }
        }

        mutating func value(depth: Int) -> Bool {
            skipWhitespace()
            guard let byte = current else { return false }
            switch byte {
            case UInt8(ascii: "{"): return container(.object, closing: UInt8(ascii: "}"), depth: depth)
            case UInt8(ascii: "["): return container(.array, closing: UInt8(ascii: "]"), depth: depth)
            case UInt8(ascii: "\""): return string()
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
            case UInt8(ascii: "t"): return literal("true", .true)
            case UInt8(ascii: "f"): return literal("false", .false)
            case UInt8(ascii: "n"): return literal("null", .null)
            default: return false
            }
        }

        private mutating func container(_ kind: Kind, closing: UInt8, depth: Int) -> Bool {
            guard depth < JSONTape.maxDepth else { return false }
            let index = values.count
            values.append(Value(kind: kind, start: Int32(position), end: 0, count: 0, next: 0))
            position += 1
            skipWhitespace()
            var count: Int32 = 0
            if current == closing {
                position += 1
            } else {
                while true {
                    if kind == .object {
                        skipWhitespace()
                        guard current == UInt8(ascii: "\""), string() else { return false }
                        skipWhitespace()
                        guard current == UInt8(ascii: ":") else { return false }
                        position += 1
                    }
                    guard value(depth: depth + 1) else { return false }
                    count += 1
                    skipWhitespace()
                    if current == UInt8(ascii: ",") {
                        position += 1
                    } else if current == closing {
                        position += 1
                        break
                    } else {
                        return false
                    }
                }
            }
            values[index].end = Int32(position)
            values[index].count = count
            values[index].next = Int32(values.count)
            return true
        }

        /// A string of printable ASCII up to the next quote; `false` at an escape, a control or a non-ASCII byte.
        private mutating func string() -> Bool {
            let start = position + 1
            let end = JSONPlainText.end(of: bytes, from: start)
            guard end < bytes.count, bytes[end] == UInt8(ascii: "\"") else { return false }
            let first = end > start ? bytes[start] : nil
            values.append(Value(kind: .string, start: Int32(start), end: Int32(end), count: 0, next: Int32(values.count + 1), first: first))
            position = end + 1
            return true
        }

        /// An integer as JSON writes it (`-`, then `0` or a non-zero digit and more digits); `false` for a
        /// fraction or an exponent, which Apple's payloads do not use.
        private mutating func number() -> Bool {
            let start = position
            if current == UInt8(ascii: "-") { position += 1 }
            guard let first = current, first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9") else { return false }
            position += 1
            if first != UInt8(ascii: "0") {
                while let digit = current, digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") { position += 1 }
            }
            if let byte = current,
                byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
                    || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            {
                return false
            }
            values.append(Value(kind: .number, start: Int32(start), end: Int32(position), count: 0, next: Int32(values.count + 1)))
            return true
        }

        private mutating func literal(_ text: StaticString, _ kind: Kind) -> Bool {
            let length = text.utf8CodeUnitCount
            guard position + length <= bytes.count,
                memcmp(bytes.baseAddress! + position, text.utf8Start, length) == 0
            else { return false }
            values.append(Value(kind: kind, start: Int32(position), end: Int32(position + length), count: 0, next: Int32(values.count + 1)))
            position += length
            return true
        }
    }
}
