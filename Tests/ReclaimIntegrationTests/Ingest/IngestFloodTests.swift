import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import ReclaimDomain
import ReclaimService
import ReclaimStore
import ReclaimTestSupport
import SwiftASN1
import Testing
import X509

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("Ingest under a flood of forged requests", .poolWatchdog)
struct IngestFloodTests {
    let logger = TestPostgres.logger

    @Test(
        "10,000 forged requests alongside 1,000 genuine ones: every genuine one is stored and answered 200; refusals are recorded in the background"
    )
    func flood() async throws {
        let ca = try TestCertificateAuthority()
        let notifications = TestNotifications(ca: ca)
        // A thousand signatures take seconds in a debug build: made in steps that yield, so the pool's other work
        // (and its watchdog) is not held behind them.
        var made: [Data] = []
        for index in 0..<1000 {
            made.append(try notifications.body(uuid: UUID(), originalTransactionId: "\(UInt64.random(in: 1...UInt64.max))"))
            if index % 20 == 19 { await Task.yield() }
        }
        let genuine = made
        // Forged: a genuine body whose signature is another's (same header and chain, so each costs one ECDSA verification).
        let template = String(decoding: genuine[0], as: UTF8.self)
        let otherSignature = String(decoding: genuine[1], as: UTF8.self).split(separator: ".").last!.split(separator: "\"").first!
        let forged = template.split(separator: ".").dropLast().joined(separator: ".") + "." + otherSignature + "\"}"
        let config = try ReclaimConfig.parse(
            yaml: """
                apps: [{bundleId: com.example.app, appAppleId: 1234567890, environments: [Sandbox]}]
                server: {rejectedInputsKept: 100000}
                """
        )
        try await withTestDatabase(maxConnections: 40) { client, _ in
            let dependencies = try Dependencies.test(postgres: client, config: config, verifier: AppleJWSVerifier(trustedRoots: [ca.root]))
            let app = Application(router: buildRouter(dependencies), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.live) { http in
                let port = try #require(http.port)
                let requests = (genuine.map { (true, $0) } + Array(repeating: (false, Data(forged.utf8)), count: 10_000)).shuffled()
                // Each lane is one client posting one request after another. A request the transport lost (a reset or a
                // timeout on a machine loaded by the rest of the suite) is posted again, as Apple retries; an HTTP
                // answer is final. Every outcome is kept, so a failure names what was seen.
                let outcomes = try await withThrowingTaskGroup(of: [(Bool, PostOutcome)].self) { group in
                    for lane in 0..<48 {
                        let mine = stride(from: lane, to: requests.count, by: 48).map { requests[$0] }
                        group.addTask {
                            var outcomes: [(Bool, PostOutcome)] = []
                            for (isGenuine, body) in mine {
                                var outcome = await postNotificationOutcome(body, port: port, timeout: 30)
                                for _ in 0..<3 {
                                    guard case .transportError = outcome else { break }
                                    outcomes.append((isGenuine, outcome))
                                    outcome = await postNotificationOutcome(body, port: port, timeout: 30)
                                }
                                outcomes.append((isGenuine, outcome))
                            }
                            return outcomes
                        }
                    }
                    var all: [(Bool, PostOutcome)] = []
                    for try await part in group { all += part }
                    return all
                }
                let genuineAnswers = outcomes.filter { $0.0 }.compactMap { if case .status(let s) = $0.1 { s } else { nil } }
                let forgedAnswers = outcomes.filter { !$0.0 }.compactMap { if case .status(let s) = $0.1 { s } else { nil } }
                let seen = Dictionary(grouping: outcomes, by: { "\($0.0 ? "genuine" : "forged") \($0.1)" }).mapValues(\.count)
                #expect(genuineAnswers.count == 1000 && genuineAnswers.allSatisfy { $0 == 200 }, "genuine not all 200: \(seen)")
                #expect(forgedAnswers.count == 10_000 && forgedAnswers.allSatisfy { $0 == 401 }, "forged not all 401: \(seen)")
            }
            let rows = try await client.query("SELECT count(*)::bigint FROM reclaim.notifications", logger: logger)
            for try await count in rows.decode(Int64.self) { #expect(count == 1000) }
            try await eventually("refusals recorded or counted as dropped", timeout: .seconds(30)) {
                let rows = try await client.query("SELECT count(*)::bigint FROM reclaim.rejected_inputs", logger: logger)
                for try await count in rows.decode(Int64.self) { return count > 0 && count <= 10_000 }
                return false
            }
        }
    }
}
