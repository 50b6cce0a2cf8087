import Foundation

/// A proportion with its 95% interval as the reports print it: `42.0% [35.1%, 49.2%]`, `+3.5%` for a signed
/// difference, `–` when there is none.
enum IntervalText {
    static func percent(_ value: Double?, lower: Double?, upper: Double?, signed: Bool = false) -> String {
        guard let value else { return "–" }
        func format(_ x: Double) -> String { (signed && x > 0 ? "+" : "") + String(format: "%.1f%%", x * 100) }
        guard let lower, let upper else { return format(value) }
        return "\(format(value)) [\(format(lower)), \(format(upper))]"
    }
}
