import Foundation
import PostgresNIO
import ReclaimStore
import ReclaimTestSupport
import Testing

/// A claim that PostgreSQL committed but whose answer the claimer never read (its deadline passed, its
/// connection dropped): the jobs are marked the claimer's, whose owner lock is alive, so without a release they
/// would wait out their lease.
@Suite("A lost claim strands no job", .poolWatchdog)
struct LostClaimTests {
    let logger = TestPostgres.logger

    @Test("a claim whose answer was lost strands nothing: the sender returns the jobs it does not hold, and only those")
    func lostClaimReleased() async throws {
        try await withTestDatabase { client, _ in
            let target = OutboundStore.Target(
                kind: "webhook",
                bundleId: "com.example.app",
                url: "https://hooks.example.com/r",
                environments: ["Sandbox"],
                events: []
            )
            try await client.transaction(logger: logger) { try await OutboundStore.sync([target], connection: $0, logger: logger) }
            for _ in 0..<4 {
                try await client.query(
                    "INSERT INTO reclaim.jobs (kind, payload, target, max_attempts) VALUES ('webhook', '{\"event\": {}, \"webhookId\": \"msg_x\"}', \(target.id), 1000000)",
                    logger: logger
                )
            }
            let worker = "host:1:outbound:test\(JobQueue.liveOwnerSuffix)"
            // The claim committed, but its answer never reached the sender: it holds only the first job (from an
            // earlier claim, still being sent).
            let claimed = try await client.withConnection(logger: logger) {
                try await OutboundStore.claim(target: target.id, limit: 4, worker: worker, lease: .seconds(600), connection: $0, logger: logger)
            }
            #expect(claimed.count == 4)
            let held = claimed[0].id
            let queue = JobQueue(postgres: client)
            let released = try await queue.releaseUnheld(worker: worker, holding: [held], target: target.id, logger: logger)
            #expect(released == 3)
            // At once claimable again (not after the 600 s lease); the held one stays the sender's.
            let again = try await client.withConnection(logger: logger) {
                try await OutboundStore.claim(target: target.id, limit: 4, worker: worker, lease: .seconds(600), connection: $0, logger: logger)
            }
            #expect(Set(again.map(\.id)) == Set(claimed.dropFirst().map(\.id)))
            let rows = try await client.query("SELECT state, locked_by FROM reclaim.jobs WHERE id = \(held)", logger: logger)
            for try await (state, owner) in rows.decode((String, String?).self) {
                #expect(state == "running" && owner == worker)
            }
            // Neither another worker's running jobs, nor this worker's of another target (or the workers' own).
            #expect(try await queue.releaseUnheld(worker: "other\(JobQueue.liveOwnerSuffix)", holding: [], target: target.id, logger: logger) == 0)
            #expect(try await queue.releaseUnheld(worker: worker, holding: [], target: nil, logger: logger) == 0)
            #expect(try await queue.releaseUnheld(worker: worker, holding: [], target: "webhook com.example.app https://other", logger: logger) == 0)
        }
    }

    @Test("workers: the jobs a lost claim marked are returned at once, and the lost attempt can no longer complete them")
    func workerJobsReleased() async throws {
        try await withTestDatabase { client, _ in
            try await enqueue(3, client: client)
            let queue = JobQueue(postgres: client)
            let worker = "host:1:test\(JobQueue.liveOwnerSuffix)"
            let lost = try await queue.claim(limit: 3, worker: worker, lease: .seconds(600), logger: logger)
            #expect(lost.count == 3)
            #expect(try await queue.releaseUnheld(worker: worker, holding: [], target: nil, logger: logger) == 3)
            let again = try await queue.claim(limit: 3, worker: worker, lease: .seconds(600), logger: logger)
            #expect(Set(again.map(\.id)) == Set(lost.map(\.id)))
            // A lane of the same process that did read the lost claim's answer cannot complete those attempts: only
            // the latest claim runs each job.
            let completedByLost = try await client.withConnection(logger: logger) {
                try await JobQueue.markCompleted(lost, worker: worker, connection: $0, logger: logger)
            }
            #expect(completedByLost.isEmpty)
            let completed = try await client.withConnection(logger: logger) {
                try await JobQueue.markCompleted(again, worker: worker, connection: $0, logger: logger)
            }
            #expect(completed == Set(lost.map(\.id)))
        }
    }
}
