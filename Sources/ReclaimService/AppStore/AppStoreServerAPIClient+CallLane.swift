import AsyncHTTPClient
import Logging
import ReclaimStore

extension AppStoreServerAPIClient {
    /// The client a call lane's job uses (refund answers, renewal-date extensions). No transaction waits on the
    /// call; a longer outage is the queue's retry, with backoff. Within the lease: a lane never waits for its turn
    /// after another could have taken the job. One sender per job: just before each attempt goes (after its pacing
    /// slot), this lane must still hold it.
    static func onCallLane(
        app: ReclaimConfig.App,
        environment: String,
        lease: CallLease,
        dependencies: Dependencies,
        database: Database,
        logger: Logger
    ) throws -> AppStoreServerAPIClient {
        var client = try AppStoreServerAPIClient(
            app: app,
            environment: environment,
            http: HTTPClient.shared,
            pacer: dependencies.applePacer,
            logger: logger
        )
        client.retry.deadline = min(.seconds(60), lease.budget)
        client.beforeEachAttempt = { try await lease.confirm(database: database, logger: logger) }
        return client
    }
}
