import Foundation

/// Random JSON text shaped like Apple's payloads (their field names, plausible and implausible values, every
/// JSON spelling: escapes, exponents, whitespace, nesting), and random damage to it.
struct RandomJSON {
    var generator: SeededGenerator
    let keys: [String]

    init(seed: UInt64, keys: [String]) {
        generator = SeededGenerator(state: seed)
        self.keys = keys
    }

    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &generator) < percent }

    mutating func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &generator)] }

    mutating func whitespace() -> String {
        chance(80) ? "" : String((0..<Int.random(in: 1...3, using: &generator)).map { _ in pick([" ", "\n", "\t", "\r"]) })
    }

    mutating func string() -> String {
        let pieces: [String] = [
            "abc", "2000000970472825", "com.example.app", "Sandbox", "Production", "00000000-0000-0000-0000-000000000051",
            "\\\"", "\\\\", "\\/", "\\n", "\\u00e9", "\\ud83d\\ude00", "é", "😀", "\u{7F}", "Auto-Renewable Subscription", "", "\\u0000",
        ]
        var text = ""
        for _ in 0..<Int.random(in: 0...3, using: &generator) { text += pick(pieces) }
        if chance(3) { text += "\u{01}" }  // a raw control character: invalid JSON
        if chance(2) { text += "\\x" }  // an invalid escape
        return "\"" + text + "\""
    }

    mutating func number() -> String {
        pick([
            "0", "1", "-1", "2", "1753863526106", "9223372036854775807", "9223372036854775808", "-9223372036854775808", "1.5", "1e3",
            "1E+2", "-0", "0.0", "01", "1.", ".5", "2147483648", "4", "5", "1e400", "-1e-5",
        ])
    }

    mutating func value(depth: Int) -> String {
        switch Int.random(in: 0..<(depth > 2 ? 5 : 7), using: &generator) {
        case 0, 1: return string()
        case 2: return number()
        case 3: return pick(["true", "false"])
        case 4: return "null"
        case 5:
            return "["
                + (0..<Int.random(in: 0...3, using: &generator)).map { _ in whitespace() + value(depth: depth + 1) + whitespace() }.joined(
                    separator: ","
                ) + "]"
        default: return object(depth: depth + 1)
        }
    }

    mutating func object(depth: Int = 0) -> String {
        var members: [String] = []
        for _ in 0..<Int.random(in: 0...(depth == 0 ? 12 : 3), using: &generator) {
            let key = chance(85) ? "\"\(pick(keys))\"" : string()
            members.append(whitespace() + key + whitespace() + ":" + whitespace() + value(depth: depth) + whitespace())
        }
        return "{" + members.joined(separator: ",") + "}"
    }

    /// Flips, inserts, deletes or truncates a few bytes.
    mutating func damage(_ text: String) -> [UInt8] {
        var bytes = Array(text.utf8)
        for _ in 0..<Int.random(in: 1...3, using: &generator) where !bytes.isEmpty {
            let index = Int.random(in: 0..<bytes.count, using: &generator)
            switch Int.random(in: 0..<4, using: &generator) {
            case 0: bytes[index] = UInt8.random(in: 0...255, using: &generator)
            case 1: bytes.insert(pick(Array("{}[]\",:\\ 0-e.".utf8)), at: index)
            case 2: bytes.remove(at: index)
            default: bytes.removeSubrange(index...)
            }
        }
        return bytes
    }
}
