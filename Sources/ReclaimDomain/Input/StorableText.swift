import Foundation

/// Text PostgreSQL can store. Its `text` and `jsonb` types refuse one character that JSON and Swift strings allow:
/// U+0000 (NUL), sent in JSON as `\u0000`. A request that carried one reached the database and came back as 503,
/// as if the database were down; every JSON document from outside (request bodies, Apple's signed payloads) is
/// checked here instead, and refused with 400 naming the field. Every other valid Unicode text stores as it is.
public enum StorableText {
    /// The path (`reason`, `data.signedTransactionInfo`, `items[2].name`) of the first string — object key or
    /// value — in `json` that holds U+0000, or nil when there is none; `""` (the whole document) when `json` holds a
    /// NUL escape or byte that no parsed value shows (it does not parse, or a duplicate key hid it).
    public static func nulPath(inJSON json: Data) -> String? {
        // A NUL in JSON text is the escape `\u0000` (a raw 0 byte is not JSON at all): most documents have no such
        // escape, and are not parsed here.
        guard json.withUnsafeBytes(mayHoldNUL) else { return nil }
        // A document this parser refuses (invalid UTF-8, say) may still be read by another (JSONDecoder replaces what
        // it cannot decode, and reads the NUL too: found by scripts/fuzz): with a NUL escape in it, refuse it whole.
        guard let document = try? JSONSerialization.jsonObject(with: json, options: [.fragmentsAllowed]) else { return "" }
        // The escape is there, yet the parsed document may not show it: with a key written twice, JSONSerialization
        // keeps the last value and JSONDecoder the first (scripts/fuzz found that too). Then refuse it whole.
        return nulPath(in: document, path: "") ?? ""
    }

    /// Refuses a string that holds U+0000, naming `field`.
    public static func check(_ value: String, field: String) throws(InvalidInput) {
        if value.utf8.contains(0) { throw nulRefusal(field) }
    }

    /// The refusal for a NUL at `path`.
    public static func nulRefusal(_ path: String) -> InvalidInput {
        InvalidInput("\(path.isEmpty ? "the document" : path) holds the character U+0000 (NUL), which cannot be stored")
    }

    /// Whether the bytes hold the escape `\u0000` or a raw 0: the cheap look before a document is parsed.
    public static func mayHoldNUL(_ raw: UnsafeRawBufferPointer) -> Bool {
        let bytes = raw.bindMemory(to: UInt8.self)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0 { return true }
            if byte == UInt8(ascii: "\\"), index + 5 < bytes.count, bytes[index + 1] == UInt8(ascii: "u"),
                bytes[index + 2] == 0x30, bytes[index + 3] == 0x30, bytes[index + 4] == 0x30, bytes[index + 5] == 0x30
            {
                return true
            }
            // Skip the escaped character, so `\\u0000` (a backslash, then text) is not read as an escape.
            index += byte == UInt8(ascii: "\\") ? 2 : 1
        }
        return false
    }

    private static func nulPath(in value: Any, path: String) -> String? {
        switch value {
        case let text as String:
            return text.utf8.contains(0) ? path : nil
        case let object as [String: Any]:
            for key in object.keys.sorted() {
                let child = path.isEmpty ? key : "\(path).\(key)"
                if key.utf8.contains(0) { return child }
                if let found = nulPath(in: object[key]!, path: child) { return found }
            }
            return nil
        case let array as [Any]:
            for (index, element) in array.enumerated() {
                if let found = nulPath(in: element, path: "\(path)[\(index)]") { return found }
            }
            return nil
        default:
            return nil
        }
    }
}
