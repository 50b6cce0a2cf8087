import Foundation

/// A `Decoder` over a ``JSONTape``: Codable models read straight from the scanned bytes.
///
/// It decodes what the tape holds and nothing cleverer: strings, integers (exactly, no overflow),
/// booleans, null, objects and arrays. Every other request — a floating-point number, a missing key for
/// a required field, a duplicated key, a type mismatch — throws ``Unsupported`` so that ``PayloadDecoder``
/// hands the payload to `JSONDecoder`, whose result (or error, with its coding path) is then the answer.
struct TapeDecoder: Decoder {
    /// The payload bytes and their tape, shared by every container.
    final class Document {
        let bytes: Data
        let tape: [JSONTape.Value]

        init(bytes: Data, tape: [JSONTape.Value]) {
            self.bytes = bytes
            self.tape = tape
        }

        func string(at index: Int) throws(Unsupported) -> String {
            let value = tape[index]
            guard value.kind == .string else { throw Unsupported() }
            // The scan admitted printable ASCII only, so the bytes are valid UTF-8 as they are.
            return bytes.withUnsafeBytes { String(decoding: UnsafeRawBufferPointer(rebasing: $0[Int(value.start)..<Int(value.end)]), as: UTF8.self) }
        }

        func integer<T: FixedWidthInteger>(_ type: T.Type, at index: Int) throws(Unsupported) -> T {
            let value = tape[index]
            guard value.kind == .number else { throw Unsupported() }
            let parsed = bytes.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Int128? in
                var position = Int(value.start)
                let negative = raw[position] == UInt8(ascii: "-")
                if negative { position += 1 }
                var magnitude: UInt64 = 0
                while position < Int(value.end) {
                    let (times10, overflow) = magnitude.multipliedReportingOverflow(by: 10)
                    let (sum, carry) = times10.addingReportingOverflow(UInt64(raw[position] &- UInt8(ascii: "0")))
                    guard !overflow, !carry else { return nil }
                    magnitude = sum
                    position += 1
                }
                return negative ? -Int128(magnitude) : Int128(magnitude)
            }
            guard let parsed, let result = T(exactly: parsed) else { throw Unsupported() }
            return result
        }

        func bool(at index: Int) throws(Unsupported) -> Bool {
            switch tape[index].kind {
            case .true: return true
            case .false: return false
            default: throw Unsupported()
            }
        }

        func isNull(at index: Int) -> Bool { tape[index].kind == .null }

        /// Whether the string at `index` is `name` (a coding key's text).
        func key(at index: Int, is name: String) -> Bool {
            let value = tape[index]
            // Length and first byte first: most keys of a model differ there, and both are cheap to read.
            guard name.utf8.count == Int(value.end - value.start), name.utf8.first == value.first else { return false }
            var name = name
            return name.withUTF8 { utf8 in
                bytes.withUnsafeBytes { raw in
                    utf8.isEmpty || memcmp(raw.baseAddress! + Int(value.start), utf8.baseAddress!, utf8.count) == 0
                }
            }
        }
    }

    /// Thrown for anything this decoder leaves to `JSONDecoder`.
    struct Unsupported: Error {}

    let document: Document
    let index: Int

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard document.tape[index].kind == .object else { throw Unsupported() }
        return KeyedDecodingContainer(KeyedContainer<Key>(document: document, index: index))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard document.tape[index].kind == .array else { throw Unsupported() }
        return UnkeyedContainer(document: document, index: index)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleValue(document: document, index: index) }

    /// The value as `T`, by the same rules as any value inside it (so a top-level `Data` is JSONDecoder's too).
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try SingleValue(document: document, index: index).decode(type) }
}

// MARK: - Values, whichever container they are reached through

/// The decoding of one value at a tape index, shared by the three kinds of container.
private protocol TapeValueReader {
    var document: TapeDecoder.Document { get }
}

extension TapeValueReader {
    func read<T: Decodable>(_ type: T.Type, at index: Int) throws -> T {
        // The common concrete types directly; everything else through its own init(from:), except the types
        // JSONDecoder decodes by rules of its own (base64 Data, URL strings, Decimal numbers, Date strategies).
        switch type {
        case is String.Type: return try document.string(at: index) as! T
        case is Int64.Type: return try document.integer(Int64.self, at: index) as! T
        case is Bool.Type: return try document.bool(at: index) as! T
        case is Data.Type, is URL.Type, is Decimal.Type, is Date.Type: throw TapeDecoder.Unsupported()
        default: return try T(from: TapeDecoder(document: document, index: index))
        }
    }

    func readDouble(at index: Int) throws -> Double {
        // Apple's payloads carry no floating-point numbers; exactness of their parsing is JSONDecoder's job.
        throw TapeDecoder.Unsupported()
    }
}

// MARK: - Keyed

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol, TapeValueReader {
    let document: TapeDecoder.Document
    let index: Int

    var codingPath: [any CodingKey] { [] }

    /// The tape index of the value under `key`, `nil` when absent. A key that occurs twice is left to
    /// JSONDecoder, so which of the two counts is never decided here.
    private func find(_ key: Key) throws(TapeDecoder.Unsupported) -> Int? {
        let name = key.stringValue
        guard let first = keyIndex(named: name) else { return nil }
        guard keyIndex(named: name, after: first) == nil else { throw TapeDecoder.Unsupported() }
        return first + 1
    }

    /// The tape index of the first key spelled `name`, searching the members after the one whose key is at
    /// `previous` (from the first member when nil).
    private func keyIndex(named name: String, after previous: Int? = nil) -> Int? {
        var member = previous.map { Int(document.tape[$0 + 1].next) } ?? index + 1
        let end = Int(document.tape[index].next)
        while member < end {
            if document.key(at: member, is: name) { return member }
            member = Int(document.tape[member + 1].next)
        }
        return nil
    }

    private func require(_ key: Key) throws(TapeDecoder.Unsupported) -> Int {
        guard let found = try find(key) else { throw TapeDecoder.Unsupported() }
        return found
    }

    /// The value under `key` unless it is absent or null.
    private func present(_ key: Key) throws(TapeDecoder.Unsupported) -> Int? {
        guard let found = try find(key), !document.isNull(at: found) else { return nil }
        return found
    }

    var allKeys: [Key] {
        var keys: [Key] = []
        var member = index + 1
        for _ in 0..<Int(document.tape[index].count) {
            if let name = try? document.string(at: member), let key = Key(stringValue: name) { keys.append(key) }
            member = Int(document.tape[member + 1].next)
        }
        return keys
    }

    /// True for a duplicated key too, so that the decode that follows declines instead of treating it as absent.
    func contains(_ key: Key) -> Bool { keyIndex(named: key.stringValue) != nil }

    func decodeNil(forKey key: Key) throws -> Bool { document.isNull(at: try require(key)) }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try document.bool(at: try require(key)) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try document.string(at: try require(key)) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try readDouble(at: try require(key)) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { Float(try readDouble(at: try require(key))) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try document.integer(type, at: try require(key)) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try document.integer(type, at: try require(key)) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try document.integer(type, at: try require(key)) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try document.integer(type, at: try require(key)) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try document.integer(type, at: try require(key)) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try document.integer(type, at: try require(key)) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try document.integer(type, at: try require(key)) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try document.integer(type, at: try require(key)) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try document.integer(type, at: try require(key)) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try document.integer(type, at: try require(key)) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try read(type, at: try require(key)) }

    // One lookup each instead of the default's three (contains, decodeNil, decode): these are the calls
    // synthesised Codable makes for Apple's optional fields.
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try present(key).map { try document.string(at: $0) } }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try present(key).map { try document.integer(type, at: $0) } }
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try present(key).map { try document.bool(at: $0) } }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? { try present(key).map { try read(type, at: $0) } }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try TapeDecoder(document: document, index: try require(key)).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try TapeDecoder(document: document, index: try require(key)).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { throw TapeDecoder.Unsupported() }
    func superDecoder(forKey key: Key) throws -> any Decoder { TapeDecoder(document: document, index: try require(key)) }
}

// MARK: - Unkeyed

private struct UnkeyedContainer: UnkeyedDecodingContainer, TapeValueReader {
    let document: TapeDecoder.Document
    let index: Int
    private var cursor: Int
    private(set) var currentIndex = 0

    init(document: TapeDecoder.Document, index: Int) {
        self.document = document
        self.index = index
        self.cursor = index + 1
    }

    var codingPath: [any CodingKey] { [] }
    var count: Int? { Int(document.tape[index].count) }
    var isAtEnd: Bool { currentIndex >= Int(document.tape[index].count) }

    /// The next element's tape index, moving past it.
    private mutating func advance() throws(TapeDecoder.Unsupported) -> Int {
        guard !isAtEnd else { throw TapeDecoder.Unsupported() }
        let element = cursor
        cursor = Int(document.tape[element].next)
        currentIndex += 1
        return element
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else { throw TapeDecoder.Unsupported() }
        // Like JSONDecoder: a null is consumed, anything else stays for the next decode.
        guard document.isNull(at: cursor) else { return false }
        _ = try advance()
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try document.bool(at: try advance()) }
    mutating func decode(_ type: String.Type) throws -> String { try document.string(at: try advance()) }
    mutating func decode(_ type: Double.Type) throws -> Double { try readDouble(at: try advance()) }
    mutating func decode(_ type: Float.Type) throws -> Float { Float(try readDouble(at: try advance())) }
    mutating func decode(_ type: Int.Type) throws -> Int { try document.integer(type, at: try advance()) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try document.integer(type, at: try advance()) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try document.integer(type, at: try advance()) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try document.integer(type, at: try advance()) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try document.integer(type, at: try advance()) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try document.integer(type, at: try advance()) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try document.integer(type, at: try advance()) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try document.integer(type, at: try advance()) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try document.integer(type, at: try advance()) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try document.integer(type, at: try advance()) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try read(type, at: try advance()) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try TapeDecoder(document: document, index: try advance()).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try TapeDecoder(document: document, index: try advance()).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder { TapeDecoder(document: document, index: try advance()) }
}

// MARK: - Single value

private struct SingleValue: SingleValueDecodingContainer, TapeValueReader {
    let document: TapeDecoder.Document
    let index: Int

    var codingPath: [any CodingKey] { [] }

    func decodeNil() -> Bool { document.isNull(at: index) }
    func decode(_ type: Bool.Type) throws -> Bool { try document.bool(at: index) }
    func decode(_ type: String.Type) throws -> String { try document.string(at: index) }
    func decode(_ type: Double.Type) throws -> Double { try readDouble(at: index) }
    func decode(_ type: Float.Type) throws -> Float { Float(try readDouble(at: index)) }
    func decode(_ type: Int.Type) throws -> Int { try document.integer(type, at: index) }
    func decode(_ type: Int8.Type) throws -> Int8 { try document.integer(type, at: index) }
    func decode(_ type: Int16.Type) throws -> Int16 { try document.integer(type, at: index) }
    func decode(_ type: Int32.Type) throws -> Int32 { try document.integer(type, at: index) }
    func decode(_ type: Int64.Type) throws -> Int64 { try document.integer(type, at: index) }
    func decode(_ type: UInt.Type) throws -> UInt { try document.integer(type, at: index) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try document.integer(type, at: index) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try document.integer(type, at: index) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try document.integer(type, at: index) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try document.integer(type, at: index) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try read(type, at: index) }
}
