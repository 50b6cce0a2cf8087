import ArgumentParser
import Foundation
import ReclaimService

/// Options naming the config file: the one place the CLI reads `RECLAIM_CONFIG`.
struct ConfigOptions: ParsableArguments {
    @Option(help: "Configuration file (YAML); defaults to $RECLAIM_CONFIG.")
    var config: String?

    /// The file named by `--config`, else by `RECLAIM_CONFIG`; nil when neither names one.
    var path: String? {
        guard let path = config ?? ProcessInfo.processInfo.environment["RECLAIM_CONFIG"], !path.isEmpty else { return nil }
        return path
    }

    /// The configuration, which the command requires.
    func load() throws -> ReclaimConfig {
        guard let path else { throw ValidationError("no configuration: set RECLAIM_CONFIG to a YAML file (see docs/configuration.md)") }
        return try ReclaimConfig.load(path: path)
    }

    /// The configuration when one is named (commands that check against it if there is one).
    func loadIfNamed() throws -> ReclaimConfig? {
        try path.map { try ReclaimConfig.load(path: $0) }
    }
}
