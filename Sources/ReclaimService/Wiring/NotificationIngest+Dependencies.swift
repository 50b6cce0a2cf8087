import Foundation
import ReclaimDomain
import ReclaimStore

extension NotificationIngest {
    /// Ingest as the server runs it: group commit into `reclaim.notifications` and its jobs (``NotificationStore``),
    /// refusals kept in `reclaim.rejected_inputs`, both on the service's database.
    public init(dependencies: Dependencies) {
        let rejections = RejectionRecorder(
            postgres: dependencies.postgres,
            keep: dependencies.config.server.rejectedInputsKept,
            logger: dependencies.logger
        )
        let batcher = CommitBatcher<NotificationRecord, Bool>(
            postgres: dependencies.postgres,
            maxWaiting: dependencies.config.server.maxPendingNotifications,
            liveness: dependencies.liveness,
            logger: dependencies.logger
        ) { [maxAttempts = dependencies.config.worker.maxAttempts] records, connection, logger in
            let inserted = try await NotificationStore.insert(records, maxAttempts: maxAttempts, connection: connection, logger: logger)
            // A UUID twice in one batch: only its first occurrence counts as stored.
            var seen = Set<UUID>()
            return records.map { inserted.contains($0.notificationUUID) && seen.insert($0.notificationUUID).inserted }
        }
        self.init(
            verifier: dependencies.verifier,
            apps: dependencies.config.appIdentities,
            batcher: batcher,
            rejections: rejections,
            forwardingApps: Set(dependencies.config.apps.filter { !$0.forwarding.isEmpty }.map(\.bundleId)),
            refusalWebhookApps: Set(
                dependencies.outboundTargets.filter { $0.row.events.contains(WebhookEvent.notificationRefused.rawValue) }.map(\.row.bundleId)
            ),
            logger: dependencies.logger
        )
    }
}
