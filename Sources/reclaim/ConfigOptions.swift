import ArgumentParser
import Foundation
import ReclaimService

/// Options naming the config file.
struct ConfigOptions: ParsableArguments {
    @Option(help: "Configuration file (YAML); defaults to $RECLAIM_CONFIG.")
    var config: String?

    func load() throws -> ReclaimConfig {
        guard let path = config ?? ProcessInfo.processInfo.environment["RECLAIM_CONFIG"], !path.isEmpty else {
            throw ValidationError("no configuration: set RECLAIM_CONFIG to a YAML file (see README.md, Configuration)")
        }
        return try ReclaimConfig.load(path: path)
    }
}
