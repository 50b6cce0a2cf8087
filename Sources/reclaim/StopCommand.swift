import ArgumentParser
import ReclaimService

struct StopCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stop",
        abstract:
            "Stop everything Reclaim tells apps and Apple about one app, on every process within a second (no offers, the cancel sheet {}, grants refused, refund answers held); --resume undoes it. Without --app: the stops in force."
    )
    @Option(help: "The app (bundle id) to stop or resume.") var app: String?
    @Option(help: "Why: shown on /readyz, the console and a refused grant, and kept in the audit log.") var reason: String?
    @Flag(help: "End the app's stop: offers, the cancel sheet and grants as before; held refund answers go out.") var resume = false
    @OptionGroup var database: DatabaseOptions
    /// When given (or RECLAIM_CONFIG is set), the app must be configured there.
    @OptionGroup var config: OptionalConfigOptions
    @OptionGroup var who: ActorOptions

    func run() async throws {
        let (url, logger) = (try database.resolved(), Bootstrap.logging())
        guard let app else {
            guard reason == nil, !resume else { throw ValidationError("name the app: --app BUNDLE_ID") }
            return print(try await StopTasks.list(url: url, logger: logger))
        }
        if resume {
            guard reason == nil else { throw ValidationError("--resume takes no --reason") }
            print(try await StopTasks.resume(bundleId: app, actor: who.actor, url: url, logger: logger))
        } else {
            guard let reason else { throw ValidationError("say why: --reason TEXT (it is shown wherever the stop is)") }
            print(
                try await StopTasks.stop(bundleId: app, reason: reason, config: try config.loadIfNamed(), actor: who.actor, url: url, logger: logger)
            )
        }
    }
}
