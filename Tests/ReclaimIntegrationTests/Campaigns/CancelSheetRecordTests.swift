import Foundation
import Hummingbird
import HummingbirdTesting
import PostgresNIO
import ReclaimDev
import ReclaimDomain
import ReclaimStore
import ReclaimTestSupport
import Testing

@testable import ReclaimService

/// Issue 59: every cancel-sheet record says what happened. A `too_late` mark lands even when the database fails
/// its first attempt, a replayed request records nothing new, and the record's deadline is one clock's.
@Suite("Cancel-sheet records true under overload: durable too_late marks, replays answered from their record", .poolWatchdog)
struct CancelSheetRecordTests {
    let logger = TestPostgres.logger

    static func request(_ ca: TestCertificateAuthority, id: String, requestIdentifier: String, signedAt: Date = Date()) throws -> String {
        let jws = try ca.sign(
            RealtimeRequest(
                originalTransactionId: id,
                appAppleId: 6_747_332_178,
                productId: CancelSheetTests.monthly,
                userLocale: "en-US",
                requestIdentifier: requestIdentifier,
                signedDate: Int64(signedAt.timeIntervalSince1970 * 1000),
                environment: .sandbox
            )
        )
        return "{\"signedPayload\": \"\(jws)\"}"
    }

    @Test(
        "the same requestIdentifier twice: at most one record, each answer true to it, a replay answered from the record once there is one; a request signed two hours ago: {} and no record"
    )
    func replays() async throws {
        let ca = try TestCertificateAuthority()
        let setup = try CampaignTestSetup(ca: ca, settings: CancelSheetTests.campaigns())
        defer { setup.remove() }
        try await withTestDatabase { client, _ in
            try await CancelSheetTests.withServer(setup, database: client) { post in
                // Until a replay was answered from its request's record (an arm shown twice, the same), at least 12
                // requests and at most 60: a busy machine's late answer is `{}`, and only a shown arm shows the replay.
                var replayedFromRecord = 0
                var asked = 0
                while asked < 60, asked < 12 || replayedFromRecord == 0 {
                    let requestIdentifier = UUID().uuidString.lowercased()
                    let body = try Self.request(ca, id: String(3_100_000_000_000_000 + asked), requestIdentifier: requestIdentifier)
                    asked += 1
                    let (firstStatus, first) = try await post(body)
                    let (againStatus, again) = try await post(body)
                    #expect(firstStatus == .ok && againStatus == .ok)
                    // One record at most, and each answer true to it: a replay repeats what was recorded for its
                    // request, or, when the first was cut by the budget before its record, is decided as a first.
                    let records = try await CancelSheetRecords.expectTrue(client, answers: [requestIdentifier: [first, again]])
                    let (one, two) = (try CancelSheetTests.json(first), try CancelSheetTests.json(again))
                    guard !one.isEmpty, !two.isEmpty else { continue }
                    // Both shown: the replay's is the recorded arm, its offer (if any) signed anew.
                    #expect(one.keys.sorted() == two.keys.sorted(), "\(first) then \(again)")
                    for key in ["message", "alternateProduct", "promotionalOffer"] {
                        let a = one[key] as? [String: Any]
                        let b = two[key] as? [String: Any]
                        #expect(a?["messageIdentifier"] as? String == b?["messageIdentifier"] as? String)
                        #expect(a?["productId"] as? String == b?["productId"] as? String)
                        #expect(a?["offerIdentifier"] as? String == b?["offerIdentifier"] as? String)
                    }
                    #expect(records[requestIdentifier]?.count == 1)
                    replayedFromRecord += 1
                }
                #expect(replayedFromRecord > 0, "no replay of a shown answer in \(asked) requests")
                let stale = try Self.request(
                    ca,
                    id: "3100000000000099",
                    requestIdentifier: UUID().uuidString.lowercased(),
                    signedAt: Date().addingTimeInterval(-7200)
                )
                let (status, body) = try await post(stale)
                #expect(status == .ok && body == "{}", "\(body)")
                #expect(
                    try await firstInt(
                        client,
                        "SELECT count(*) FROM reclaim.cancel_sheet_decisions WHERE original_transaction_id = '3100000000000099'"
                    )
                        == 0
                )
            }
        }
    }

    @Test("a request and its replay at once, for subscribers already decided (repeats): one record per requestIdentifier, one answer")
    func concurrentReplayOfARepeat() async throws {
        let ca = try TestCertificateAuthority()
        let setup = try CampaignTestSetup(ca: ca, settings: CancelSheetTests.campaigns())
        defer { setup.remove() }
        try await withTestDatabase { client, _ in
            try await CancelSheetTests.withServer(setup, database: client) { post in
                let subscribers = (0..<20).map { String(3_100_000_000_000_200 + $0) }
                // Each subscriber's first decision, so that every later request is a repeat of it.
                for id in subscribers {
                    _ = try await CancelSheetRecords.decided(client, post: post) { try Self.request(ca, id: id, requestIdentifier: $0) }
                }
                let answers = try await withThrowingTaskGroup(of: (String, String).self) { group in
                    for id in subscribers {
                        let requestIdentifier = UUID().uuidString.lowercased()
                        let body = try Self.request(ca, id: id, requestIdentifier: requestIdentifier)
                        for _ in 0..<2 {
                            group.addTask {
                                let (status, answer) = try await post(body)
                                #expect(status == .ok)
                                return (requestIdentifier, answer)
                            }
                        }
                    }
                    return try await group.reduce(into: [String: [String]]()) { $0[$1.0, default: []].append($1.1) }
                }
                let records = try await CancelSheetRecords.expectTrue(client, answers: answers)
                #expect(records.values.allSatisfy { $0.allSatisfy { $0.repeatOf != nil || $0.outcome == "too_late" } })
                for (request, bodies) in answers {
                    let shown = try Set(bodies.map { try CancelSheetTests.json($0).keys.sorted() }.filter { !$0.isEmpty })
                    #expect(shown.count <= 1, "request \(request): \(bodies)")
                }
            }
        }
    }

    /// Records an answered decision for each id, then runs `body` with a one-connection pool whose connection no
    /// longer answers (cut by a proxy): the first attempt of anything gets no answer, and later connections do.
    func withAnsweredDecisionsAndACutConnection(
        _ ids: [UUID],
        _ body: @Sendable (_ client: Database, _ far: Database) async throws -> Void
    ) async throws {
        try await withTestDatabase { client, url in
            for id in ids {
                try await client.query(
                    """
                    INSERT INTO reclaim.cancel_sheet_decisions (id, campaign_id, bundle_id, environment, original_transaction_id,
                        request_identifier, product_id, outcome, shadow, answer, message_identifier, reason)
                    VALUES (\(id), 'cancel-sheet', 'GeniusParentingAI', 'Sandbox', '1', \(UUID().uuidString), 'p', 'answered', false,
                        'message', 'm', 'an arm')
                    """,
                    logger: logger
                )
            }
            let proxy = try TCPProxy(upstreamPort: url.port)
            defer { proxy.stop() }
            var far = url
            far.host = "127.0.0.1"
            far.port = proxy.port
            far.socketDirectory = nil
            let deadlines = Database.Deadlines(acquire: .seconds(5), query: .seconds(1), transaction: .seconds(2))
            try await Database.withDatabase(far, maxConnections: 1, deadlines: deadlines, logger: logger) { database in
                try await database.query("SELECT 1", logger: logger)
                // The pool's one connection now swallows everything: the first attempt gets no answer.
                #expect(proxy.cut() >= 1)
                try await body(client, database)
            }
        }
    }

    @Test("a too_late mark whose first attempt the database never answers is tried again until it lands")
    func tooLateMarkLands() async throws {
        let id = UUID()
        try await withAnsweredDecisionsAndACutConnection([id]) { client, database in
            let marking = TooLateMarks(postgres: database, logger: logger).mark(id)
            try await eventually("the mark landed", timeout: .seconds(30)) {
                try await firstInt(client, "SELECT count(*) FROM reclaim.cancel_sheet_decisions WHERE outcome = 'too_late'") == 1
            }
            await marking.value
        }
    }

    @Test("too_late marks wait in one bounded set: past its capacity the oldest are dropped and counted; the rest land together")
    func tooLateMarksBounded() async throws {
        let ids = (0..<8).map { _ in UUID() }
        try await withAnsweredDecisionsAndACutConnection(ids) { client, database in
            let marks = TooLateMarks(postgres: database, logger: logger, capacity: 5)
            var drainer: Task<Void, Never>?
            for id in ids { drainer = marks.mark(id) }
            #expect(marks.pending == 5, "the capacity holds")
            await drainer?.value
            #expect(marks.pending == 0)
            let marked = try await client.query("SELECT id FROM reclaim.cancel_sheet_decisions WHERE outcome = 'too_late'", logger: logger)
            var landed = Set<UUID>()
            for try await id in marked.decode(UUID.self) { landed.insert(id) }
            #expect(landed == Set(ids.suffix(5)), "the newest five landed, the oldest three were dropped")
        }
    }

    @Test("a record carries the budget that remains, measured by PostgreSQL: inserted with time left, not past it, whatever the wall clocks say")
    func oneClock() async throws {
        let ca = try TestCertificateAuthority()
        let setup = try CampaignTestSetup(ca: ca, settings: CancelSheetTests.campaigns())
        defer { setup.remove() }
        let campaign = try #require(try setup.config.domainCampaigns().of(CancelSheetCampaign.self).first { $0.id == "cancel-sheet" })
        try await withTestDatabase { client, _ in
            func record(_ deadline: ContinuousClock.Instant, _ id: String) -> CancelSheetStore.Record {
                CancelSheetStore.Record(
                    id: UUID(),
                    subscriber: SubscriberKey(bundleId: "GeniusParentingAI", environment: "Sandbox", originalTransactionId: id),
                    requestIdentifier: UUID().uuidString.lowercased(),
                    productId: CancelSheetTests.monthly,
                    decision: CancelSheetDecision(campaign: campaign, outcome: .heldOut, variant: nil, reason: "held out", repeatOf: nil),
                    deadline: deadline
                )
            }
            let records = [record(.now + .seconds(5), "1"), record(.now - .milliseconds(1), "2")]
            let inserted = try await client.withConnection(logger: logger) { connection in
                try await CancelSheetStore.record(records, connection: connection, logger: logger)
            }
            #expect(inserted == [true, false])
        }
    }
}
