import Foundation
import Yams

extension ReclaimConfig {
    /// Environments Apple sends.
    static let knownEnvironments: Set<String> = ["Production", "Sandbox", "Xcode", "LocalTesting"]

    /// Parses YAML text and validates it.
    public static func parse(yaml: String, source: String = "config") throws -> ReclaimConfig {
        let config: ReclaimConfig
        do {
            config = try YAMLDecoder().decode(ReclaimConfig.self, from: yaml)
        } catch let error as DecodingError {
            throw ConfigError("\(source): \(Self.describe(error))")
        } catch {
            throw ConfigError("\(source): not valid YAML: \(error)")
        }
        try config.validate(source: source)
        return config
    }

    /// Loads the file at `path` (the value of `RECLAIM_CONFIG`).
    public static func load(path: String) throws -> ReclaimConfig {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigError("cannot read config file \(path)")
        }
        return try parse(yaml: String(decoding: data, as: UTF8.self), source: path)
    }

    /// Checks what decoding cannot: references between sections and value ranges.
    public func validate(source: String = "config") throws {
        var problems: [String] = []
        var bundles = Set<String>()
        for app in apps {
            if app.bundleId.isEmpty { problems.append("an app has an empty bundleId") }
            if !bundles.insert(app.bundleId).inserted { problems.append("app \(app.bundleId) is listed twice") }
            for environment in app.environments where !Self.knownEnvironments.contains(environment) {
                problems.append(
                    "app \(app.bundleId): unknown environment \(environment) (use \(Self.knownEnvironments.sorted().joined(separator: ", ")))"
                )
            }
            if app.environments.contains("Production") && app.appAppleId == nil {
                problems.append("app \(app.bundleId): appAppleId is required when Production is accepted")
            }
            var keyIds = Set<String>()
            for key in app.signingKeys where !keyIds.insert(key.keyId).inserted {
                problems.append("app \(app.bundleId): signing key \(key.keyId) is listed twice")
            }
        }
        problems += campaignProblems()
        if worker.concurrency < 1 { problems.append("worker.concurrency must be at least 1") }
        if worker.batchSize < 1 { problems.append("worker.batchSize must be at least 1") }
        if worker.maxAttempts < 1 { problems.append("worker.maxAttempts must be at least 1") }
        if server.maxBodyBytes < 1024 { problems.append("server.maxBodyBytes must be at least 1024") }
        if server.maxConnections < 1 { problems.append("server.maxConnections must be at least 1") }
        if server.maxPendingNotifications < 1 { problems.append("server.maxPendingNotifications must be at least 1") }
        if server.idleTimeout.seconds < 1 { problems.append("server.idleTimeout must be at least 1s") }
        if !problems.isEmpty {
            throw ConfigError("\(source):\n" + problems.map { "  - \($0)" }.joined(separator: "\n"))
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            // campaigns[0].cooldown, not campaigns.[0].cooldown
            context.codingPath.reduce(into: "") { path, key in
                if let index = key.intValue {
                    path += "[\(index)]"
                } else {
                    path += (path.isEmpty ? "" : ".") + key.stringValue
                }
            }
        }
        switch error {
        case .keyNotFound(let key, let context):
            let at = path(context)
            return "missing key \(at.isEmpty ? "" : at + ".")\(key.stringValue)"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            if let underlying = context.underlyingError as? ConfigError { return "\(path(context)): \(underlying)" }
            return "\(path(context)): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }
}
