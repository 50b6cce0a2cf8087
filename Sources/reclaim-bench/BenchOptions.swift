import Foundation

/// `--name value` options and positional arguments, without a parser dependency.
struct BenchOptions {
    private var values: [String: String] = [:]
    private var positionals: [String] = []

    init(_ arguments: [String]) {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument.hasPrefix("--"), index + 1 < arguments.count {
                values[String(argument.dropFirst(2))] = arguments[index + 1]
                index += 2
            } else {
                positionals.append(argument)
                index += 1
            }
        }
    }

    func positional(_ index: Int) throws -> String {
        guard index < positionals.count else { throw BenchError("missing argument \(index + 1)") }
        return positionals[index]
    }

    func string(_ name: String) throws -> String {
        guard let value = values[name] ?? ProcessInfo.processInfo.environment[name.uppercased().replacingOccurrences(of: "-", with: "_")] else {
            throw BenchError("missing --\(name)")
        }
        return value
    }

    func int(_ name: String, default value: Int) -> Int { values[name].flatMap(Int.init) ?? value }
    func double(_ name: String, default value: Double) -> Double { values[name].flatMap(Double.init) ?? value }
}

/// Prints figures as one line of JSON (sorted keys), the contract of `scripts/bench`.
func printFigures(_ figures: [String: Any]) {
    let data = (try? JSONSerialization.data(withJSONObject: figures, options: [.sortedKeys])) ?? Data("{}".utf8)
    print(String(decoding: data, as: UTF8.self))
}

/// Nearest-rank percentile of sorted values.
func percentile(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return 0 }
    let rank = Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1
    return sorted[min(max(rank, 0), sorted.count - 1)]
}

extension Duration {
    /// Whole and fractional seconds.
    var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// Runs `step` (given the iteration number) again and again on the calling task for about `seconds`;
/// returns how many iterations ran and in how long exactly.
func timedLoop(seconds: Double, _ step: (Int) async throws -> Void) async rethrows -> (iterations: Int, seconds: Double) {
    let clock = ContinuousClock()
    let start = clock.now
    let deadline = start.advanced(by: budget(seconds: seconds))
    var iterations = 0
    while clock.now < deadline {
        try await step(iterations)
        iterations += 1
    }
    return (iterations, start.duration(to: clock.now).inSeconds)
}

/// A run's length from a `--seconds` value: clamped to 0…1 day, and zero for NaN (no trapping conversion).
func budget(seconds: Double) -> Duration {
    guard seconds.isFinite else { return .zero }
    return .milliseconds(Int64(min(max(seconds, 0), 86_400) * 1000))
}
