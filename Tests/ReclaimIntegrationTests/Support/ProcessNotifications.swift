import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import ReclaimDomain
import ReclaimService
import ReclaimStore
import ReclaimTestSupport
import Testing

/// Posts each body in order to ingest (in process), processing nothing.
func ingestNotifications(_ bodies: [Data], dependencies: Dependencies) async throws {
    let app = Application(router: buildRouter(dependencies))
    try await app.test(.router) { http in
        for body in bodies {
            try await http.execute(
                uri: "/v1/apple/notifications",
                method: .post,
                headers: [.contentType: "application/json"],
                body: ByteBuffer(bytes: body)
            ) {
                #expect($0.status == .ok)
            }
        }
    }
}

/// The snapshots the worker would make of these notifications (verified, in the order given); those that name
/// no subscription are left out.
func snapshots(of notifications: [AppleSandboxFixtures.Notification], verifier: AppleJWSVerifier) async throws -> [SubscriptionSnapshot] {
    var snapshots: [SubscriptionSnapshot] = []
    for notification in notifications {
        let verified = try await verifier.verifyNotification(notification.signedPayload)
        guard let uuid = UUID(uuidString: notification.uuid), let snapshot = SubscriptionSnapshot(verified, notificationUUID: uuid) else {
            continue
        }
        snapshots.append(snapshot)
    }
    return snapshots
}

/// Posts each body in order to ingest (in process), then lets one worker lane process every job: the
/// notifications are processed in the order given.
///
/// `notWaitingForJobsDueAfter`: jobs due later than this (a campaign deferred by months) are left waiting.
func processNotifications(
    _ bodies: [Data],
    client: Database,
    dependencies: Dependencies,
    notWaitingForJobsDueAfter later: Date? = nil
) async throws {
    try await ingestNotifications(bodies, dependencies: dependencies)
    let pool = WorkerPool(
        queue: JobQueue(postgres: client),
        handlers: jobHandlers(dependencies),
        options: .init(concurrency: 1, batchSize: 16, pollInterval: .milliseconds(50)),
        logger: TestPostgres.logger
    )
    try await withServices([pool]) {
        // Every job was queued before its notification's 200: none left means all processed.
        try await eventually("all jobs processed") {
            let rows = try await client.query(
                "SELECT count(*)::bigint FROM reclaim.jobs WHERE state <> 'completed' AND (\(later)::timestamptz IS NULL OR run_at <= \(later))",
                logger: TestPostgres.logger
            )
            for try await count in rows.decode(Int64.self) { return count == 0 }
            return false
        }
    }
}
