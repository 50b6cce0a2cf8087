import Foundation
import Logging
import PostgresNIO
import ReclaimDomain
import ReclaimStore
import ReclaimTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("Through PgBouncer 1.18 in transaction mode (prepared statements not tracked)", .poolWatchdog)
struct PgBouncerTests {
    let logger = TestPostgres.logger

    /// Runs the launch check (a hot prepared statement) once on each of two client connections, one after the
    /// other, through a pool of one server connection: what the second gets.
    func launchCheckTwice(through bouncer: TestPgBouncer, _ url: DatabaseURL, mode: PreparedStatements) async -> [Result<Bool, any Error>] {
        var results: [Result<Bool, any Error>] = []
        for _ in 0..<2 {
            do {
                let answer = try await Database.withDatabase(
                    bouncer.url(database: url.database, user: url.username),
                    maxConnections: 1,
                    // Short deadlines: a test that goes wrong fails in seconds rather than in an hour.
                    deadlines: Database.Deadlines(acquire: .seconds(10), query: .seconds(5), transaction: .seconds(5)),
                    preparedStatements: mode,
                    logger: logger
                ) { database in
                    try await database.withConnection(logger: logger) {
                        try await OfferStore.hasDeliverable(bundleId: "com.example.app", appAccountToken: UUID(), connection: $0, logger: logger)
                    }
                }
                results.append(.success(answer))
            } catch {
                results.append(.failure(error))
            }
        }
        return results
    }

    @Test(
        "named prepared statements break behind a pooler that does not track them (the second client finds the first one's statement on the shared server connection); unnamed ones run",
        .timeLimit(.minutes(3))
    )
    func namedAndUnnamed() async throws {
        let url = try await TestPostgres.shared.newDatabase()
        let bouncer = try await TestPgBouncer(server: url, poolSize: 1)
        defer { bouncer.stopInBackground() }

        let named = await launchCheckTwice(through: bouncer, url, mode: .named)
        // The first client prepares its statement on the one server connection; the second's Parse of the same name
        // lands there too and fails.
        let failures = named.compactMap { if case .failure(let error) = $0 { String(reflecting: error) } else { nil } }
        #expect(named.count == 2 && failures.count == 1, "\(named)")
        #expect(failures.first?.contains("42P05") == true && failures.first?.contains("already exists") == true, "\(failures)")

        let unnamed = await launchCheckTwice(through: bouncer, url, mode: .unnamed)
        #expect(unnamed.allSatisfy { if case .success(false) = $0 { true } else { false } }, "\(unnamed)")
    }

    @Test(
        "reclaim serve --role api through PgBouncer with database.preparedStatements: unnamed, the worker direct: every notification answered 200 and stored once, every subscriber's offer delivered through it",
        .timeLimit(.minutes(5))
    )
    func apiThroughPgBouncer() async throws {
        let (directory, ca) = try serverTestFiles(prefix: "pgbouncer", keyId: "POOLKEY001")
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try writeRetainConfig(
            in: directory,
            keyId: "POOLKEY001",
            settings: "worker: {pollInterval: 1s}\ndatabase: {preparedStatements: unnamed}"
        )
        let subscribers = 60
        let notifications = TestNotifications(ca: ca)
        let tokens = (0..<subscribers).map { _ in UUID() }
        let bodies = try tokens.enumerated().map { index, token in
            try notifications.body(originalTransactionId: "\(4_000_000_000_000_000 + index)", appAccountToken: token)
        }
        let url = try await TestPostgres.shared.newDatabase()
        let bouncer = try await TestPgBouncer(server: url, poolSize: 2)
        defer { bouncer.stopInBackground() }
        let pooled = bouncer.url(database: url.database, user: url.username)
        try await Database.withDatabase(url, maxConnections: 4, logger: logger) { client in
            try await ServerProcess.withAPIAndWorker(
                config: config,
                databaseURL: pooled.connectionString,
                workerDatabaseURL: url.connectionString,
                logs: directory
            ) { api, worker in
                let statuses = try await withThrowingTaskGroup(of: [Int].self) { group in
                    for lane in 0..<8 {
                        let mine = stride(from: lane, to: bodies.count, by: 8).map { bodies[$0] }
                        group.addTask {
                            var statuses: [Int] = []
                            for body in mine { statuses.append(await postNotification(body, port: api.port, timeout: 30) ?? 0) }
                            return statuses
                        }
                    }
                    return try await group.reduce(into: []) { $0 += $1 }
                }
                #expect(statuses.count == subscribers && statuses.allSatisfy { $0 == 200 }, "\(statuses)\n\(api.logTail())")

                try await eventually("every job processed", timeout: .seconds(120), every: .milliseconds(200)) {
                    let rows = try await client.query("SELECT count(*)::bigint FROM reclaim.jobs WHERE state <> 'completed'", logger: logger)
                    for try await count in rows.decode(Int64.self) { return count == 0 }
                    return false
                }
                let stored = try await client.query(
                    "SELECT count(*)::bigint, count(DISTINCT notification_uuid)::bigint FROM reclaim.notifications",
                    logger: logger
                )
                for try await (count, distinct) in stored.decode((Int64, Int64).self) { #expect(count == Int64(subscribers) && distinct == count) }

                let key = try await TestKeys(client: client).create(scope: .app, bundleId: "com.example.app", logger: logger)
                // The app's launches, eight at a time: the API's pool then spreads them over several client connections,
                // which PgBouncer serves from its two server connections in turn.
                let answers = try await withThrowingTaskGroup(of: [String].self) { group in
                    for lane in 0..<8 {
                        let mine = stride(from: lane, to: tokens.count, by: 8).map { tokens[$0] }
                        group.addTask {
                            var failures: [String] = []
                            for token in mine {
                                var request = URLRequest(
                                    url: URL(string: "http://127.0.0.1:\(api.port)/v1/offers?appAccountToken=\(token.uuidString.lowercased())")!
                                )
                                request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
                                request.timeoutInterval = 30
                                let (data, response) = try await URLSession.shared.boundedData(for: request)
                                let status = (response as? HTTPURLResponse)?.statusCode ?? 0
                                let offers = (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["offers"] as? [Any]
                                if status != 200 || offers?.count != 1 {
                                    failures.append("\(status) \(String(decoding: data.prefix(300), as: UTF8.self))")
                                }
                            }
                            return failures
                        }
                    }
                    return try await group.reduce(into: []) { $0 += $1 }
                }
                #expect(answers.isEmpty, "\(answers.count) launches without their offer: \(answers.prefix(3))")
                let delivered = subscribers - answers.count
                #expect(delivered == subscribers)
                #expect(!api.logTail(20_000).contains("prepared statement"), "\(api.logTail())")
                // PgBouncer drops the session limits (ignore_startup_parameters): the API says so, with the fix; the
                // worker, connected directly, has them.
                #expect(api.logTail(20_000).contains("the database session lacks Reclaim's limits"), "\(api.logTail())")
                #expect(api.logTail(20_000).contains("ALTER ROLE reclaim SET idle_in_transaction_session_timeout = '35000ms';"), "\(api.logTail())")
                #expect(!worker.logTail(20_000).contains("lacks Reclaim's limits"), "\(worker.logTail())")
            }
        }
    }
}
