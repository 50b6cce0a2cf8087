/// A duration written in the config as a number and a unit: `90s`, `30m`, `12h`, `7d`, `2w`.
public struct ConfigDuration: Sendable, Equatable, Decodable, CustomStringConvertible {
    public let seconds: Int64
    public let description: String

    public init(seconds: Int64) {
        self.seconds = seconds
        self.description = "\(seconds)s"
    }

    public init(parsing text: String) throws(ConfigError) {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800]
        guard let unit = text.last, let multiplier = units[unit], let value = Int64(text.dropLast()), value >= 0 else {
            throw ConfigError("'\(text)' is not a duration: write a whole number and one of s, m, h, d, w (e.g. 7d)")
        }
        self.seconds = value * multiplier
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
