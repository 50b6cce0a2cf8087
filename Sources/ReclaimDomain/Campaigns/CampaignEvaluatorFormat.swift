import Foundation

/// How the rules write durations in reasons: the largest whole unit, as the config does (`90d`, `12h`).
public enum CampaignEvaluatorFormat {
    public static func duration(_ seconds: TimeInterval) -> String {
        let whole = Int64(seconds)
        for (unit, size) in [("w", Int64(604_800)), ("d", 86_400), ("h", 3600), ("m", 60)] where whole >= size && whole % size == 0 {
            return "\(whole / size)\(unit)"
        }
        return "\(whole)s"
    }
}
