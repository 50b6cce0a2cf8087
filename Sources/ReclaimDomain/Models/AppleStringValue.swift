/// Shared behaviour of Apple's open string "enums" (notification type, subtype, environment).
///
/// Apple adds values without notice, so these are structs over the raw string rather than closed enums:
/// a value this build has never heard of decodes, compares and re-encodes unchanged.
public protocol AppleStringValue: RawRepresentable, Codable, Hashable, Sendable, ExpressibleByStringLiteral,
    CustomStringConvertible
where RawValue == String {
    /// Wraps a raw value, known or not.
    init(rawValue: String)
}

extension AppleStringValue {
    public init(stringLiteral value: String) { self.init(rawValue: value) }

    public var description: String { rawValue }

    // Written out instead of synthesised so the wire form is the bare string, never `{"rawValue": …}`.
    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
