import Foundation
import PostgresNIO
import ReclaimStore
import ReclaimTestSupport
import Testing

/// docs/operations.md, "Processes and roles": any number of API and worker processes against one PostgreSQL.
@Suite("Two API and two worker processes against one PostgreSQL", .poolWatchdog)
struct ScaleOutTests {
    let logger = TestPostgres.logger

    @Test("the corpus, each notification posted to both APIs at once and replayed, has the effects of one process")
    func twoAndTwo() async throws {
        let setup = try CampaignTestSetup()
        defer { setup.remove() }
        let corpus = try CorpusCampaignTests.corpusInSignedDateOrder().map(\.notification.body)
        try await withTestDatabase { client, url in
            func process(_ role: String, _ index: Int) throws -> ServerProcess {
                try ServerProcess(
                    role: role,
                    config: setup.configFile,
                    databaseURL: url.connectionString,
                    log: setup.directory.appendingPathComponent("\(role)-\(index).log")
                )
            }
            let apis = [try process("api", 1), try process("api", 2)]
            let workers = [try process("worker", 1), try process("worker", 2)]
            for server in apis + workers { try server.start() }
            defer { for server in apis + workers { server.stopInBackground() } }
            for api in apis { try await api.waitUntilUp() }

            // In signedDate order, as Apple sends them; each one to both APIs at the same moment (a retry racing
            // the original), and the next only after a worker has processed it, so the outcome is comparable with
            // CorpusCampaignTests' single process.
            for (index, body) in corpus.enumerated() {
                async let first = postNotification(body, port: apis[0].port)
                async let second = postNotification(body, port: apis[1].port)
                let statuses = await [first, second]
                #expect(statuses == [200, 200], "notification \(index)")
                try await eventually("notification \(index) processed", timeout: .seconds(30), every: .milliseconds(10)) {
                    try await firstInt(client, "SELECT count(*) FROM reclaim.jobs WHERE state <> 'completed'") == 0
                }
            }
            // Then every notification again to both APIs at once, eight at a time: duplicates, nothing new.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for lane in 0..<8 {
                    group.addTask {
                        for body in stride(from: lane, to: corpus.count, by: 8).map({ corpus[$0] }) {
                            for api in apis {
                                let status = await postNotification(body, port: api.port)
                                #expect(status == 200)
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }

            #expect(try await firstInt(client, "SELECT count(*) FROM reclaim.notifications") == corpus.count)
            #expect(try await firstInt(client, "SELECT count(*) FROM reclaim.jobs") == corpus.count)
            #expect(try await firstInt(client, "SELECT count(*) FROM reclaim.jobs WHERE state <> 'completed'") == 0)
            #expect(
                try await decisionCounts(client) == ["retain-auto-renew-off/offered": 2, "winback-expired/offered": 7, "winback-expired/skipped": 2]
            )
            let offers = try await OfferRow.all(client)
            #expect(offers.count == 9)
            #expect(offers.filter { $0.state == "ready" }.map(\.campaignId) == ["winback-expired"])
            #expect(Set(offers.map(\.nonce)).count == 9)
            // Races between the processes (duplicate inserts, claims, the subscriber's row lock) are handled, not logged.
            for server in apis + workers {
                let log = try String(contentsOf: server.log, encoding: .utf8)
                #expect(!log.contains("error"), "\(server.log.lastPathComponent): \(log)")
            }
        }
    }
}
