import ReclaimDomain
import ReclaimStore

extension RetentionMessaging {
    /// Retention Messaging as the server runs it: the config's cancel-sheet campaigns, their decisions recorded by group
    /// commit into `reclaim.cancel_sheet_decisions` (``CancelSheetStore``) on the service's database.
    public init(dependencies: Dependencies) {
        let recorder = CommitBatcher<CancelSheetStore.Record, Bool>(
            postgres: dependencies.postgres,
            maxWaiting: dependencies.config.server.maxPendingNotifications,
            liveness: dependencies.liveness,
            logger: dependencies.logger,
            // Before the turn (CancelSheetStore.record's condition): an erasure under way commits before the insert
            // starts, so that its snapshot sees it.
            prepare: { connection, logger in try await WorkerBarrier.share(connection: connection, logger: logger) },
            flush: { records, connection, logger in try await CancelSheetStore.record(records, connection: connection, logger: logger) }
        )
        self.init(
            verifier: dependencies.verifier,
            config: dependencies.config,
            campaigns: dependencies.campaigns.of(CancelSheetCampaign.self),
            postgres: dependencies.postgres,
            issuer: dependencies.issuer,
            recorder: recorder
        )
        budget = .milliseconds(dependencies.config.server.retentionBudgetMilliseconds)
        stops = dependencies.appStops
    }
}
