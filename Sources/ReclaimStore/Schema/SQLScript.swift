/// Splits a SQL script into statements.
///
/// PostgresNIO speaks the extended query protocol, which runs one statement per query, so a
/// script such as `schema.sql` is split first. The splitter understands what can hide a `;`:
/// `'…'` strings, `"…"` identifiers, `$tag$…$tag$` bodies, `--` and `/* … */` comments.
public enum SQLScript {
    /// The statements of `script`, trimmed, without empty ones and without trailing `;`.
    public static func statements(_ script: String) -> [String] {
        let chars = Array(script.unicodeScalars)
        var statements: [String] = []
        var current = String.UnicodeScalarView()
        var index = 0

        func flush() {
            let text = String(current).trimmingWhitespace()
            if !text.isEmpty && !text.isOnlyComments { statements.append(text) }
            current = String.UnicodeScalarView()
        }

        while index < chars.count {
            let scalar = chars[index]
            let next: Unicode.Scalar? = index + 1 < chars.count ? chars[index + 1] : nil
            switch scalar {
            case "-" where next == "-":
                // Line comment: copy up to the end of the line.
                while index < chars.count && chars[index] != "\n" {
                    current.append(chars[index])
                    index += 1
                }
                continue
            case "/" where next == "*":
                let end = find("*/", in: chars, from: index + 2) ?? chars.count
                current.append(contentsOf: chars[index..<min(end + 2, chars.count)])
                index = end + 2
                continue
            case "'", "\"":
                // Quoted text; a doubled quote is an escaped quote and simply continues the scan.
                current.append(scalar)
                index += 1
                while index < chars.count {
                    current.append(chars[index])
                    if chars[index] == scalar {
                        index += 1
                        break
                    }
                    index += 1
                }
                continue
            case "$":
                if let tag = dollarTag(in: chars, at: index) {
                    let bodyStart = index + tag.count
                    let end = find(tag, in: chars, from: bodyStart).map { $0 + tag.count } ?? chars.count
                    current.append(contentsOf: chars[index..<end])
                    index = end
                    continue
                }
            case ";":
                flush()
                index += 1
                continue
            default:
                break
            }
            current.append(scalar)
            index += 1
        }
        flush()
        return statements
    }

    /// `$tag$` or `$$` starting at `index`, if there is one.
    private static func dollarTag(in chars: [Unicode.Scalar], at index: Int) -> String? {
        var end = index + 1
        while end < chars.count, chars[end] == "_" || chars[end].properties.isAlphabetic || ("0"..."9").contains(chars[end]) {
            end += 1
        }
        guard end < chars.count, chars[end] == "$" else { return nil }
        return String(String.UnicodeScalarView(chars[index...end]))
    }

    private static func find(_ needle: String, in chars: [Unicode.Scalar], from start: Int) -> Int? {
        let pattern = Array(needle.unicodeScalars)
        guard !pattern.isEmpty, chars.count >= pattern.count else { return nil }
        var index = start
        while index <= chars.count - pattern.count {
            if chars[index..<index + pattern.count].elementsEqual(pattern) { return index }
            index += 1
        }
        return nil
    }
}

extension String {
    fileprivate func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }

    /// True when every non-blank line is a `--` comment.
    fileprivate var isOnlyComments: Bool {
        split(separator: "\n").allSatisfy { line in
            let trimmed = String(line).trimmingWhitespace()
            return trimmed.isEmpty || trimmed.hasPrefix("--")
        }
    }
}
