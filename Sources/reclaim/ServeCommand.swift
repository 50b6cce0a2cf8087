import ArgumentParser
import ReclaimService

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "serve", abstract: "Run the HTTP API and/or the workers.")

    @Option(help: "What this process runs: all, api or worker.")
    var role: ServerRole = .all
    @Option(help: "Address to listen on.")
    var host: String = "0.0.0.0"
    @Option(help: "HTTP port.")
    var port: Int = 8080
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var configOptions: ConfigOptions

    func run() async throws {
        let logger = Bootstrap.logging()
        let registry = Bootstrap.metrics()
        var server = ReclaimServer(config: try configOptions.load(), databaseURL: try database.resolved(), role: role, host: host, port: port)
        server.configSHA256 = configOptions.path.flatMap(Audit.sha256(ofFile:))
        try await server.run(metricsRegistry: registry, logger: logger)
    }
}
