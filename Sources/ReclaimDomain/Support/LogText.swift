/// Text from outside made safe to write into a log line or to echo in an error: control characters and line
/// separators escaped, length bounded.
///
/// A value that holds a newline, a carriage return, U+2028 or an ANSI escape would otherwise start what looks like
/// a genuine log line of its own (log forging), and a 180 KB header field would be echoed whole.
public enum LogText {
    /// How many characters of one outside value an error message echoes.
    public static let echoLimit = 40
    /// How many characters a problem's `detail` or a refusal's recorded reason keeps.
    public static let reasonLimit = 200

    /// `text` with every control or line-breaking character escaped (`\n`, `\u{1B}`, …) and cut to `limit`
    /// characters, saying how many were cut.
    public static func bounded(_ text: some StringProtocol, limit: Int) -> String {
        var out = ""
        var kept = 0
        var scalars = text.unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            guard kept < limit else {
                var rest = 1
                while scalars.next() != nil { rest += 1 }
                return out + "…(\(rest) more)"
            }
            appendEscaped(scalar, to: &out)
            kept += 1
        }
        return out
    }

    /// `text` with every control or line-breaking character escaped, whatever its length.
    public static func escaped(_ text: some StringProtocol) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return String(text) }
        var out = ""
        for scalar in text.unicodeScalars { appendEscaped(scalar, to: &out) }
        return out
    }

    /// C0 and C1 controls, DEL, the Unicode line and paragraph separators, and the bidirectional overrides that
    /// can make a terminal show text in another order than it was written.
    public static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    private static func appendEscaped(_ scalar: Unicode.Scalar, to out: inout String) {
        guard needsEscape(scalar) else {
            out.unicodeScalars.append(scalar)
            return
        }
        switch scalar {
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        default: out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
        }
    }
}
