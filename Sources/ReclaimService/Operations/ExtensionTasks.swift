import AsyncHTTPClient
import Foundation
import Logging
import ReclaimStore

/// `reclaim extensions`: outage make-goods through Apple (``MassExtensions``).
public enum ExtensionTasks {
    /// `reclaim extensions all`: each product's mass extension in turn, polled until complete unless `wait` is false.
    public static func extendAll(
        _ request: MassExtensions.Request,
        config: ReclaimConfig,
        url: DatabaseURL,
        wait: Bool,
        pollEvery: Duration,
        logger: Logger,
        progress: @escaping @Sendable (MassExtensions.Progress) -> Void
    ) async throws -> [MassExtensions.Outcome] {
        try await RecoveryTasks.withDependencies(config: config, url: url, logger: logger) { dependencies, http in
            try await MassExtensions(dependencies: dependencies, http: http, pollEvery: pollEvery, logger: logger).run(
                request,
                wait: wait,
                progress: progress
            )
        }
    }

    /// Who runs a command, for the records it makes: `--actor`, else `RECLAIM_ACTOR`, else the operating-system
    /// user (in the container image always `reclaim`, uid 10001: set one of the others there).
    public static func actor(_ given: String?) -> String {
        if let given, !given.isEmpty { return given }
        if let named = ProcessInfo.processInfo.environment["RECLAIM_ACTOR"], !named.isEmpty { return named }
        return ProcessInfo.processInfo.userName.isEmpty ? "uid \(getuid())" : ProcessInfo.processInfo.userName
    }
}
