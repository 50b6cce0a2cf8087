import Foundation
import PostgresNIO
import ReclaimDomain
import ReclaimStore
import ReclaimTestSupport
import SwiftASN1
import Testing
import X509

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("reclaim serve killed with kill -9 while subscribers' notifications pour in", .poolWatchdog)
struct CampaignCrashTests {
    let logger = TestPostgres.logger

    @Test("every acknowledged notification is stored and every subscriber ends with exactly one offer")
    func killNine() async throws {
        let (directory, ca) = try serverTestFiles(prefix: "crash", keyId: "CRASHKEY01")
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try writeRetainConfig(
            in: directory,
            keyId: "CRASHKEY01",
            campaign: "    cooldown: 90d",
            settings: "worker: {lease: 3s, pollInterval: 1s}"
        )

        // Each subscriber turns auto-renew off twice (two notifications, one second apart): the cooldown or the
        // staleness of the older one must leave exactly one offer, however processing interleaves with kills.
        let subscribers = 1000
        let notifications = TestNotifications(ca: ca)
        let base = Date()
        var signed: [(uuid: UUID, body: Data)] = []
        for index in 0..<subscribers {
            for second in 0..<2 {
                let uuid = UUID()
                signed.append(
                    (
                        uuid,
                        try notifications.body(
                            uuid: uuid,
                            originalTransactionId: "\(3_000_000_000_000_000 + index)",
                            appAccountToken: UUID(),
                            signedDate: base.addingTimeInterval(Double(second))
                        )
                    )
                )
            }
        }
        let bodies = signed.shuffled()

        try await withTestDatabase { client, url in
            try await ServerProcess.withAPIAndWorker(config: config, databaseURL: url.connectionString, logs: directory) { api, worker in
                let acknowledged = try await withThrowingTaskGroup(of: [UUID].self) { group in
                    let chunks = 16
                    for chunk in 0..<chunks {
                        let mine = stride(from: chunk, to: bodies.count, by: chunks).map { bodies[$0] }
                        group.addTask { try await Self.post(mine, port: api.port) }
                    }
                    // The killer: one process or the other, at random moments, restarted at once.
                    group.addTask {
                        for round in 0..<10 {
                            try await Task.sleep(for: .milliseconds(Int.random(in: 300...900)))
                            let victim = round % 2 == 0 ? api : worker
                            await victim.killNine()
                            try victim.start()
                        }
                        return []
                    }
                    var all: [UUID] = []
                    for try await uuids in group { all += uuids }
                    return all
                }
                #expect(acknowledged.count == bodies.count)

                try await eventually("every job processed", timeout: .seconds(180), every: .milliseconds(200)) {
                    let rows = try await client.query(
                        "SELECT count(*)::bigint FROM reclaim.jobs WHERE state <> 'completed'",
                        logger: logger
                    )
                    for try await count in rows.decode(Int64.self) { return count == 0 }
                    return false
                }
                let stored = try await client.query("SELECT notification_uuid FROM reclaim.notifications", logger: logger)
                var storedIds = Set<UUID>()
                for try await uuid in stored.decode(UUID.self) { storedIds.insert(uuid) }
                #expect(Set(acknowledged).isSubset(of: storedIds), "an acknowledged notification is missing")
                let perSubscriber = try await client.query(
                    """
                    SELECT count(*)::bigint, min(n)::bigint, max(n)::bigint FROM (
                        SELECT s.original_transaction_id, count(o.id) AS n
                        FROM reclaim.subscriptions s LEFT JOIN reclaim.offers o USING (bundle_id, environment, original_transaction_id)
                        GROUP BY 1) t
                    """,
                    logger: logger
                )
                for try await (count, fewest, most) in perSubscriber.decode((Int64, Int64, Int64).self) {
                    #expect(count == Int64(subscribers))
                    #expect(fewest == 1, "a subscriber got no offer")
                    #expect(most == 1, "a subscriber got two offers")
                }
                let decisions = try await decisionCounts(client)
                #expect(decisions["retain/offered"] == subscribers)
                #expect(decisions["retain/skipped"] == subscribers)
            }
        }
    }

    /// Posts each body until the server answers 200, as Apple retries: a killed server is a connection error.
    static func post(_ bodies: [(uuid: UUID, body: Data)], port: Int) async throws -> [UUID] {
        var acknowledged: [UUID] = []
        for (uuid, body) in bodies {
            var attempts = 0
            while true {
                attempts += 1
                if await postNotification(body, port: port) == 200 {
                    acknowledged.append(uuid)
                    break
                }
                guard attempts < 600 else { throw DeadlineExceeded(description: "notification \(uuid) never acknowledged") }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        return acknowledged
    }
}
