import ReclaimDomain

/// A duration written in the config as a number and a unit: `90s`, `30m`, `12h`, `7d`, `2w`.
public struct ConfigDuration: Sendable, Equatable, Decodable, CustomStringConvertible {
    public let seconds: Int64
    public let description: String

    public init(seconds: Int64) {
        self.seconds = seconds
        self.description = "\(seconds)s"
    }

    public init(parsing text: String) throws(ConfigError) {
        guard let seconds = DurationText.seconds(text) else {
            throw ConfigError(
                "'\(LogText.bounded(text, limit: 40))' is not a duration: write a whole number and one of s, m, h, d, w (e.g. 7d), at most 36525d"
            )
        }
        self.seconds = seconds
        self.description = text
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        try self.init(parsing: text)
    }

    public var duration: Duration { .seconds(seconds) }
}

extension KeyedDecodingContainer {
    /// A duration under `key`, or nil; a malformed one fails as a decoding error at its path, so the
    /// message names the key (`campaigns[0].cooldown: …`).
    func decodeDurationIfPresent(forKey key: Key) throws -> ConfigDuration? {
        guard let text = try decodeIfPresent(String.self, forKey: key) else { return nil }
        do {
            return try ConfigDuration(parsing: text)
        } catch {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: error.description)
        }
    }
}
