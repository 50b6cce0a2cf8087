import Foundation
import PostgresNIO
import ReclaimDomain
import ReclaimStore
import ReclaimTestSupport
import SwiftASN1
import Testing
import X509

@Suite("A killed worker's jobs come back through its released owner lock, not its lease", .poolWatchdog)
struct KilledWorkerJobsTests {
    let logger = TestPostgres.logger

    @Test("kill -9 of one of two workers in mid-batch: the other finishes the jobs it held within seconds, with a 60 s lease")
    func jobsReturnAtOnce() async throws {
        let (directory, ca) = try serverTestFiles(prefix: "killed", keyId: "KILLKEY001")
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try writeRetainConfig(
            in: directory,
            keyId: "KILLKEY001",
            settings: "worker: {lease: 60s, concurrency: 2, batchSize: 50}\nserver: {databaseConnections: 12}"
        )
        let notifications = TestNotifications(ca: ca)
        let bodies = try (0..<1500).map { index in
            try notifications.body(
                uuid: UUID(),
                originalTransactionId: "\(5_000_000_000_000_000 + index)",
                appAccountToken: UUID(),
                signedDate: Date()
            )
        }
        try await withTestDatabase { client, url in
            let api = try ServerProcess(
                role: "api",
                config: config,
                databaseURL: url.connectionString,
                log: directory.appendingPathComponent("api.log")
            )
            // Two worker processes, as a deployment runs them: one is killed, the other takes over its jobs.
            let workers = try ["a", "b"].map {
                try ServerProcess(
                    role: "worker",
                    config: config,
                    databaseURL: url.connectionString,
                    log: directory.appendingPathComponent("worker-\($0).log")
                )
            }
            try api.start()
            defer {
                api.stopInBackground()
                for worker in workers { worker.stopInBackground() }
            }
            try await api.waitUntilUp()
            // The backlog first, so that the workers are busy when one dies.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for chunk in 0..<8 {
                    let mine = stride(from: chunk, to: bodies.count, by: 8).map { bodies[$0] }
                    group.addTask { for body in mine { #expect(await postNotification(body, port: api.port) == 200) } }
                }
                try await group.waitForAll()
            }
            // Kill the first while it holds claimed jobs (its worker id is host:pid:…). Until the kill, this
            // transaction's lock on the offers holds every batch before it writes: on a busy machine the victim once
            // finished its claimed jobs between the read below and the kill, and nothing was left to rescue.
            let (ids, killed, killedAt) = try await client.transaction(logger: logger, deadline: .seconds(120)) { connection in
                try await connection.query("LOCK TABLE reclaim.offers IN EXCLUSIVE MODE", logger: logger)
                for worker in workers { try worker.start() }
                let victim = try #require(workers[0].process?.pid)
                var held: [Int64] = []
                try await eventually("the worker holds claimed jobs", timeout: .seconds(60), every: .milliseconds(10)) {
                    held = try await Self.ids(client, "SELECT id FROM reclaim.jobs WHERE state = 'running' AND locked_by LIKE \("%:\(victim):%")")
                    return !held.isEmpty
                }
                await workers[0].killNine()
                let killed = ContinuousClock.now
                var killedAt = Date()
                for try await now in try await client.query("SELECT now()", logger: logger).decode(Date.self) { killedAt = now }
                return (held, killed, killedAt)
            }
            try await eventually("the dead worker's jobs completed", timeout: .seconds(50), every: .milliseconds(20)) {
                try await Self.ids(client, "SELECT id FROM reclaim.jobs WHERE id = ANY(\(ids)) AND state <> 'completed'").isEmpty
            }
            let returned = ContinuousClock.now - killed
            // When they started again (claimed by the live worker), by the database's clock against the kill's.
            var started = 0.0
            for try await seconds in try await client.query(
                "SELECT extract(epoch FROM max(claimed_at) - \(killedAt))::float8 FROM reclaim.jobs WHERE id = ANY(\(ids))",
                logger: logger
            ).decode(Double.self) { started = seconds }
            print("killed worker's \(ids.count) claimed jobs started again \(started) s and completed \(returned) after the kill (lease 60 s)")
            // Far inside the lease: they came back through the lock the dead session released.
            #expect(returned < .seconds(30), "\(returned)")
            let errors = try await client.query(
                "SELECT count(*)::bigint FROM reclaim.jobs WHERE id = ANY(\(ids)) AND last_error LIKE '%database session ended%'",
                logger: logger
            )
            for try await count in errors.decode(Int64.self) { #expect(count > 0, "none was rescued by its owner's lock") }
            try await eventually("every notification processed", timeout: .seconds(120), every: .milliseconds(100)) {
                try await Self.ids(client, "SELECT id FROM reclaim.jobs WHERE state <> 'completed'").isEmpty
            }
            let offers = try await Self.ids(client, "SELECT count(*)::bigint FROM reclaim.offers")
            #expect(offers == [Int64(bodies.count)], "one offer per subscriber, none twice")
        }
    }

    static func ids(_ client: Database, _ query: PostgresQuery) async throws -> [Int64] {
        var ids: [Int64] = []
        for try await id in try await client.query(query, logger: TestPostgres.logger).decode(Int64.self) { ids.append(id) }
        return ids
    }
}
