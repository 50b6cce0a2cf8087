import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import ReclaimService
import ReclaimStore
import Testing

/// Posts each body in order to ingest (in process), then lets one worker lane process every job: the
/// notifications are processed in the order given.
func processNotifications(_ bodies: [Data], client: Database, dependencies: Dependencies) async throws {
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
    let pool = WorkerPool(
        queue: JobQueue(postgres: client),
        handlers: jobHandlers(dependencies),
        options: .init(concurrency: 1, batchSize: 16, pollInterval: .milliseconds(50)),
        logger: TestPostgres.logger
    )
    try await withServices([pool]) {
        // Every job was queued before its notification's 200: none left means all processed.
        try await eventually("all jobs processed") {
            let rows = try await client.query("SELECT count(*)::bigint FROM reclaim.jobs WHERE state <> 'completed'", logger: TestPostgres.logger)
            for try await count in rows.decode(Int64.self) { return count == 0 }
            return false
        }
    }
}
