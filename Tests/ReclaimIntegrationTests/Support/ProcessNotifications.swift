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
        do {
            try await eventually("all jobs processed") {
                let rows = try await client.query(
                    "SELECT count(*)::bigint FROM reclaim.jobs WHERE state <> 'completed' AND (\(later)::timestamptz IS NULL OR run_at <= \(later))",
                    logger: TestPostgres.logger
                )
                for try await count in rows.decode(Int64.self) { return count == 0 }
                return false
            }
        } catch let error as DeadlineExceeded {
            throw DeadlineExceeded(description: "\(error.description); \(try await unfinishedWork(client))")
        }
    }
}

/// What a wait for the queue found left: the jobs not completed and what the database's sessions were doing.
func unfinishedWork(_ client: Database) async throws -> String {
    var lines: [String] = []
    let jobs = try await client.query(
        """
        SELECT id, kind, state, attempts, run_at::text, coalesce(last_error, '') FROM reclaim.jobs
        WHERE state <> 'completed' ORDER BY id LIMIT 10
        """,
        logger: TestPostgres.logger
    )
    for try await (id, kind, state, attempts, runAt, error) in jobs.decode((Int64, String, String, Int32, String, String).self) {
        lines.append("job \(id) \(kind) \(state) attempts \(attempts) run_at \(runAt) \(error)")
    }
    let sessions = try await client.query(
        """
        SELECT pid, coalesce(state, ''), coalesce(wait_event_type || ':' || wait_event, ''), (now() - query_start)::text, left(query, 200)
        FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
        """,
        logger: TestPostgres.logger
    )
    for try await (pid, state, wait, age, query) in sessions.decode((Int32, String, String, String?, String).self) {
        lines.append("session \(pid) \(state) \(wait) for \(age ?? "-"): \(query)")
    }
    return lines.joined(separator: "; ")
}
