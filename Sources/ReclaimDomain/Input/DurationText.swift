/// A duration written as a whole number and one unit, `90s`, `30m`, `12h`, `7d` or `2w`: the form of the
/// config's durations, the grant API's `deliverableFor` and the command line's `--since`.
///
/// The text comes from outside (a request body, a file, an argument), so the number is parsed and multiplied
/// with checked arithmetic: anything that does not fit, or is longer than ``maximumSeconds``, is not a duration.
public enum DurationText {
    /// 100 years (36,525 days). Longer is never meant, and keeps every date computed from a duration
    /// (now + duration) far inside what `Date`, PostgreSQL and PostgresNIO can represent.
    public static let maximumSeconds: Int64 = 36_525 * 86_400

    /// The seconds `text` denotes, or nil when it is not a duration of 0 to ``maximumSeconds`` seconds.
    public static func seconds(_ text: some StringProtocol) -> Int64? {
        guard let unit = text.last, let multiplier = multiplier(unit), text.utf8.count <= 32 else { return nil }
        let digits = text.dropLast()
        // Digits only: Int64("+5") and Int64("-0") parse, but are not how a duration is written.
        guard !digits.isEmpty, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let value = Int64(digits) else { return nil }
        let (seconds, overflow) = value.multipliedReportingOverflow(by: multiplier)
        guard !overflow, seconds <= maximumSeconds else { return nil }
        return seconds
    }

    private static func multiplier(_ unit: Character) -> Int64? {
        switch unit {
        case "s": 1
        case "m": 60
        case "h": 3600
        case "d": 86_400
        case "w": 604_800
        default: nil
        }
    }
}
