import ArgumentParser
import Foundation
import ReclaimService

/// The config file named by `--config`, else by `RECLAIM_CONFIG` (the one place the CLI reads it); nil when neither
/// names one.
private func configPath(_ option: String?) -> String? {
    guard let path = option ?? ProcessInfo.processInfo.environment["RECLAIM_CONFIG"], !path.isEmpty else { return nil }
    return path
}

/// The config file of a command that needs one. Its help says "required": docs/configuration.md's list of the commands
/// that need `RECLAIM_CONFIG` is held to the commands whose help says so (DocsContractTests).
struct ConfigOptions: ParsableArguments {
    @Option(help: "Configuration file (YAML), required; defaults to $RECLAIM_CONFIG.")
    var config: String?

    /// The file named, for its SHA-256 in the audit log (`process.start`).
    var path: String? { configPath(config) }

    func load() throws -> ReclaimConfig {
        guard let path = configPath(config) else {
            throw ValidationError("no configuration: set RECLAIM_CONFIG to a YAML file (see docs/configuration.md)")
        }
        return try ReclaimConfig.load(path: path)
    }
}

/// The config file of a command that checks against it when one is named, and runs without.
struct OptionalConfigOptions: ParsableArguments {
    @Option(help: "Configuration file (YAML), checked against when named; defaults to $RECLAIM_CONFIG.")
    var config: String?

    func loadIfNamed() throws -> ReclaimConfig? {
        try configPath(config).map { try ReclaimConfig.load(path: $0) }
    }
}
