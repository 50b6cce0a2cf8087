import Foundation

/// How the rules write durations and times in reasons: the largest whole unit, as the config does (`90d`, `12h`);
/// ISO 8601.
public enum CampaignEvaluatorFormat {
    public static func iso(_ date: Date) -> String { date.formatted(.iso8601) }

    public static func duration(_ seconds: TimeInterval) -> String {
        // Config durations are bounded (``DurationText/maximumSeconds``); a value beyond Int64 is written as is.
        guard seconds.isFinite, let whole = Int64(exactly: seconds.rounded(.down)) else { return "\(seconds)s" }
        for (unit, size) in [("w", Int64(604_800)), ("d", 86_400), ("h", 3600), ("m", 60)] where whole >= size && whole % size == 0 {
            return "\(whole / size)\(unit)"
        }
        return "\(whole)s"
    }
}
