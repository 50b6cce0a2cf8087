import Foundation
import Hummingbird
import HummingbirdTesting
import PostgresNIO
import ReclaimDomain
import ReclaimStore
import ReclaimTestSupport
import Synchronization
import Testing

@testable import ReclaimService

/// Issue 58: refund answers on call lanes of their own. Apple slow, failing or refusing the key costs nothing but
/// the answer's own retry: no other job waits for it, and no answer Apple accepted is sent again.
@Suite("Refund answers on their own path: a slow or failing Apple holds up nothing and hears each answer once", .poolWatchdog)
struct RefundAnswerPathTests {
    let logger = TestPostgres.logger
    typealias Setup = RecoveryTests.Setup

    static let refunds =
        "{consent: terms, default: {deliveryStatus: DELIVERED, sampleContentProvided: false}, policies: [{id: decline-all, refundPreference: DECLINE}]}"

    func withStandIn(_ standIn: AppleAPIStandIn, _ body: @Sendable (Int) async throws -> Void) async throws {
        let app = Application(router: standIn.router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { http in try await body(try #require(http.port)) }
    }

    /// One lane for the batches and `calls` call lanes, polling every 50 ms.
    func pool(_ client: Database, _ dependencies: Dependencies, calls: Int) -> WorkerPool {
        WorkerPool(
            queue: JobQueue(postgres: client),
            handlers: jobHandlers(dependencies),
            options: .init(concurrency: 1, callConcurrency: calls, batchSize: 16, pollInterval: .milliseconds(50)),
            logger: logger
        )
    }

    static func request(_ setup: Setup, _ id: String) throws -> Data {
        try RefundRequestTests.notification(setup, type: "CONSUMPTION_REQUEST", id: id, data: ["consumptionRequestReason": "UNINTENDED_PURCHASE"])
    }

    @Test("one request failing at Apple is retried alone: every other answer Apple accepted is sent once, never again")
    func oneFailureResendsNothing() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let standIn = setup.standIn()
        // Five 500s: the client's own attempts for one call, all failed; the job's next attempt is accepted.
        standIn.consumptionFailures.withLock { $0["8100000000000003"] = 5 }
        try await withStandIn(standIn) { port in
            try await withTestDatabase { client, _ in
                let config = try RefundRequestTests.config(setup, port: port, refunds: Self.refunds)
                let dependencies = try Dependencies.test(postgres: client, config: config)
                let ids = (1...6).map { "810000000000000\($0)" }
                try await processNotifications(try ids.map { try Self.request(setup, $0) }, client: client, dependencies: dependencies)
                let accepted = standIn.consumptionAnswers.withLock { $0 }.map(\.transactionId)
                for id in ids {
                    #expect(accepted.filter { $0 == id }.count == 1, "\(id) accepted \(accepted.filter { $0 == id }.count) times: \(accepted)")
                }
                #expect(try await firstInt(client, "SELECT count(*) FROM reclaim.refund_requests WHERE status = 'sent'") == 6)
                #expect(try await firstInt(client, "SELECT count(*) FROM reclaim.jobs WHERE kind = 'refund_answer' AND attempts > 1") == 1)
            }
        }
    }

    @Test("while Apple answers nothing, notifications keep being processed: the refund answers wait on their own lanes")
    func slowAppleHoldsNothing() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let standIn = setup.standIn()
        standIn.consumptionHeld.withLock { $0 = true }
        try await withStandIn(standIn) { port in
            try await withTestDatabase { client, _ in
                let config = try RefundRequestTests.config(setup, port: port, refunds: Self.refunds)
                let dependencies = try Dependencies.test(postgres: client, config: config)
                // One lane for the batches: before, it claimed the refund answers with the notifications behind them
                // and waited on Apple inside the batch's transaction.
                let pool = pool(client, dependencies, calls: 2)
                try await withServices([pool]) {
                    try await ingestNotifications(try (1...4).map { try Self.request(setup, "820000000000000\($0)") }, dependencies: dependencies)
                    try await eventually("the refund answers queued") {
                        try await firstInt(client, "SELECT count(*) FROM reclaim.jobs WHERE kind = 'refund_answer'") == 4
                    }
                    var later: [Data] = []
                    for index in 1...6 {
                        later.append(
                            try RefundRequestTests.notification(setup, type: "DID_CHANGE_RENEWAL_STATUS", id: "830000000000000\(index)")
                        )
                    }
                    try await ingestNotifications(later, dependencies: dependencies)
                    try await eventually("every notification processed while Apple answers nothing", timeout: .seconds(15)) {
                        try await firstInt(client, "SELECT count(*) FROM reclaim.jobs WHERE kind = 'process_notification' AND state <> 'completed'")
                            == 0
                    }
                    #expect(try await firstInt(client, "SELECT count(*) FROM reclaim.refund_requests WHERE status = 'sent'") == 0)
                    standIn.consumptionHeld.withLock { $0 = false }
                    try await eventually("the answers sent once Apple answers") {
                        try await firstInt(client, "SELECT count(*) FROM reclaim.refund_requests WHERE status = 'sent'") == 4
                    }
                }
                #expect(standIn.consumptionAnswers.withLock { $0 }.count == 4)
            }
        }
    }

    @Test(
        "Apple silent while 12 refund requests wait: 60 subscribers turning auto-renew off all get their offers first; then each answer is accepted once"
    )
    func offersWhileAppleSilent() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let standIn = setup.standIn()
        standIn.consumptionHeld.withLock { $0 = true }
        try await withStandIn(standIn) { port in
            try await withTestDatabase { client, _ in
                // RecoveryTests' app and its campaign `retain` (AUTO_RENEW_DISABLED), with refunds.
                let api = "baseURL: \"http://127.0.0.1:\(port)\"}"
                let config = try ReclaimConfig.parse(
                    yaml: setup.yaml(port: port).replacingOccurrences(of: api, with: api + "\n    refunds: \(Self.refunds)")
                )
                let dependencies = try Dependencies.test(postgres: client, config: config)
                let pool = WorkerPool(
                    queue: JobQueue(postgres: client),
                    handlers: jobHandlers(dependencies),
                    options: .init(concurrency: 2, callConcurrency: 4, batchSize: 64, pollInterval: .milliseconds(50)),
                    logger: logger
                )
                try await withServices([pool]) {
                    let requests = (1...12).map { String(8_500_000_000_000_000 + $0) }
                    try await ingestNotifications(try requests.map { try Self.request(setup, $0) }, dependencies: dependencies)
                    var lapsing: [Data] = []
                    for index in 1...60 {
                        lapsing.append(
                            try setup.notifications.body(originalTransactionId: String(8_600_000_000_000_000 + index), appAccountToken: UUID())
                        )
                    }
                    try await ingestNotifications(lapsing, dependencies: dependencies)
                    let ingested = ContinuousClock.now
                    try await eventually("60 offers while Apple answers nothing") {
                        try await firstInt(client, "SELECT count(*) FROM reclaim.offers WHERE campaign_id = 'retain'") == 60
                    }
                    // A figure, not a bound: how long after the last notification the 60th offer stood.
                    print("refund answers held by Apple: the 60th offer \(ContinuousClock.now - ingested) after the last notification")
                    #expect(try await firstInt(client, "SELECT count(*) FROM reclaim.refund_requests WHERE status = 'sent'") == 0)
                    standIn.consumptionHeld.withLock { $0 = false }
                    try await eventually("the 12 answers sent once Apple answers") {
                        try await firstInt(client, "SELECT count(*) FROM reclaim.refund_requests WHERE status = 'sent'") == 12
                    }
                    let accepted = standIn.consumptionAnswers.withLock { $0 }.map(\.transactionId)
                    #expect(accepted.sorted() == requests.sorted(), "each answer accepted once: \(accepted)")
                }
            }
        }
    }

    @Test("a refund answer whose job another lane holds now (released and claimed again) is not sent by the first lane; the holder sends it once")
    func oneSenderPerAnswer() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let standIn = setup.standIn()
        try await withStandIn(standIn) { port in
            try await withTestDatabase { client, _ in
                let config = try RefundRequestTests.config(setup, port: port, refunds: Self.refunds)
                let dependencies = try Dependencies.test(postgres: client, config: config)
                try await ingestNotifications([try Self.request(setup, "8400000000000009")], dependencies: dependencies)
                // The notification's batch decides the answer and queues its job (no call lane runs).
                try await withServices([pool(client, dependencies, calls: 0)]) {
                    try await eventually("the answer's job is queued") {
                        try await firstInt(client, "SELECT count(*)::int FROM reclaim.jobs WHERE kind = 'refund_answer' AND state = 'available'") == 1
                    }
                }
                let queue = JobQueue(postgres: client)
                let worker = "test-worker"
                // Lane A claims it; a batch lane's releaseUnheld hands it back before A noted it; lane B claims it.
                let first = try #require(try await queue.claimCall(kind: "refund_answer", worker: worker, lease: .seconds(60), logger: logger))
                _ = try await queue.releaseUnheld(worker: worker, holding: [], target: nil, logger: logger)
                let second = try #require(try await queue.claimCall(kind: "refund_answer", worker: worker, lease: .seconds(60), logger: logger))
                #expect(second.id == first.id && second.attempt == first.attempt + 1)
                let handler = RefundAnswerJobHandler(dependencies: dependencies)
                await #expect(throws: CallLease.Lost.self) {
                    _ = try await handler.call(
                        first,
                        lease: CallLease(job: first, worker: worker, budget: .seconds(55)),
                        database: client,
                        logger: logger
                    )
                }
                #expect(standIn.consumptionAnswers.withLock { $0 }.isEmpty, "the lane that lost the job sent it")
                _ = try await handler.call(
                    second,
                    lease: CallLease(job: second, worker: worker, budget: .seconds(55)),
                    database: client,
                    logger: logger
                )
                #expect(standIn.consumptionAnswers.withLock { $0 }.map(\.transactionId) == ["8400000000000009"])
            }
        }
    }

    @Test("Apple's 401 keeps the request pending, noted, and tries it again in 10 minutes; the retry is counted")
    func unauthorizedRetried() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let standIn = setup.standIn(failures: [1: .unauthorized])
        try await withStandIn(standIn) { port in
            try await withTestDatabase { client, _ in
                let config = try RefundRequestTests.config(setup, port: port, refunds: Self.refunds)
                let dependencies = try Dependencies.test(postgres: client, config: config)
                let retries = { TestMetrics.counterValue("reclaim_refund_answer_retries_total", dimensions: [("reason", "unauthorized")]) }
                let before = retries()
                try await ingestNotifications([try Self.request(setup, "8400000000000001")], dependencies: dependencies)
                let pool = pool(client, dependencies, calls: 1)
                try await withServices([pool]) {
                    try await eventually("the answer's first attempt failed") {
                        try await firstInt(client, "SELECT count(*) FROM reclaim.jobs WHERE kind = 'refund_answer' AND state = 'retryable'") == 1
                    }
                }
                let rows = try await client.query(
                    """
                    SELECT r.status, r.apple_status, extract(epoch FROM j.run_at - now())::float8
                    FROM reclaim.refund_requests r JOIN reclaim.jobs j ON j.kind = 'refund_answer'
                    """,
                    logger: logger
                )
                for try await (status, appleStatus, wait) in rows.decode((String, Int32?, Double).self) {
                    #expect(status == "pending" && appleStatus == 401, "\(status) \(String(describing: appleStatus))")
                    #expect(wait > 540 && wait <= 600, "retried in \(wait) s")
                }
                #expect(retries() == before + 1)
                #expect(standIn.consumptionAnswers.withLock { $0 }.isEmpty)
            }
        }
    }

    @Test("a request past Apple's 12 hours after 401s is expired, with the last attempt's error kept")
    func unauthorizedUntilExpiry() async throws {
        try await withTestDatabase { client, _ in
            let setup = try Setup()
            defer { setup.remove() }
            let config = try RefundRequestTests.config(setup, port: 9, refunds: Self.refunds)
            let dependencies = try Dependencies.test(postgres: client, config: config)
            try await client.query(
                """
                INSERT INTO reclaim.refund_requests (notification_uuid, bundle_id, environment, original_transaction_id, transaction_id,
                    requested_at, arm, policy_id, body, apple_status, apple_error)
                VALUES (\(UUID()), 'com.example.app', 'Sandbox', '1', '1', now() - interval '13 hours', 'policy', 'decline-all', '{}'::jsonb,
                    401, 'HTTP 401 from Apple')
                """,
                logger: logger
            )
            try await client.query(
                "INSERT INTO reclaim.jobs (kind, payload) SELECT 'refund_answer', jsonb_build_object('request', id) FROM reclaim.refund_requests",
                logger: logger
            )
            let pool = pool(client, dependencies, calls: 1)
            try await withServices([pool]) {
                try await eventually("the job completed") {
                    try await firstInt(client, "SELECT count(*) FROM reclaim.jobs WHERE state = 'completed'") == 1
                }
            }
            let rows = try await client.query("SELECT status, apple_status, apple_error FROM reclaim.refund_requests", logger: logger)
            for try await (status, appleStatus, error) in rows.decode((String, Int32?, String?).self) {
                #expect(status == "expired" && appleStatus == 401)
                #expect(error?.contains("HTTP 401 from Apple") == true, "\(error ?? "")")
            }
        }
    }

    @Test("a calling job handed to a transaction refuses, naming its lanes; the batches' claim never takes one")
    func callJobsNeverBatched() async throws {
        try await withTestDatabase { client, _ in
            let dependencies = try Dependencies.test(postgres: client)
            let handler = try #require(jobHandlers(dependencies)[RefundRequests.jobKind])
            #expect(handler is any CallingJobHandler)
            try await client.query(
                "INSERT INTO reclaim.jobs (kind, payload) VALUES ('refund_answer', '{\"request\":1}'), ('process_notification', '{}')",
                logger: logger
            )
            let queue = JobQueue(postgres: client)
            let batch = try await queue.claim(limit: 10, worker: "w", lease: .seconds(60), excluding: [RefundRequests.jobKind], logger: logger)
            #expect(batch.map(\.kind) == ["process_notification"])
            let call = try await queue.claimCall(kind: RefundRequests.jobKind, worker: "w", lease: .seconds(60), logger: logger)
            #expect(call?.kind == RefundRequests.jobKind)
            let job = try #require(call)
            await #expect(throws: CallInsideTransaction.self) {
                try await client.withConnection(logger: logger) { try await handler.handle(job, connection: $0, logger: logger) }
            }
            // The call lanes' claim reads its own index, not the batches' (a table this small is read whole unless
            // told otherwise).
            let lines = try await client.withConnection(logger: logger) { connection in
                try await connection.query("SET enable_seqscan = off", logger: logger)
                let plan = try await connection.query(
                    """
                    EXPLAIN SELECT id FROM reclaim.jobs
                    WHERE state IN ('available', 'retryable') AND run_at <= now() AND target IS NULL AND kind = \(RefundRequests.jobKind)
                    ORDER BY run_at, id LIMIT 1 FOR UPDATE SKIP LOCKED
                    """,
                    logger: logger
                )
                var lines: [String] = []
                for try await line in plan.decode(String.self) { lines.append(line) }
                return lines
            }
            #expect(lines.joined(separator: "\n").contains("jobs_call_claim_idx"), "\(lines.joined(separator: "\n"))")
        }
    }
}

extension RefundAnswerPathTests {
    /// Runs one claimed refund answer job to its end: the call, then the record it returns, in its own transaction.
    func run(_ job: Job, _ handler: RefundAnswerJobHandler, client: Database) async throws {
        let record = try await handler.call(
            job,
            lease: CallLease(job: job, worker: "test-worker", budget: .seconds(55)),
            database: client,
            logger: logger
        )
        try await client.transaction(logger: logger) { connection in
            _ = try await JobQueue.markCompleted([job], worker: "test-worker", connection: connection, logger: self.logger)
            try await record?(connection, self.logger)
        }
    }

    @Test(
        "an app stopped (reclaim stop) holds its refund answers, noted, unsent, without spending attempts; resumed, they go out once; past Apple's 12 hours one expires, counted on the stop"
    )
    func heldByAStop() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let standIn = setup.standIn()
        try await withStandIn(standIn) { port in
            try await withTestDatabase { client, _ in
                let config = try RefundRequestTests.config(setup, port: port, refunds: Self.refunds)
                let dependencies = try Dependencies.test(postgres: client, config: config)
                try await ingestNotifications(
                    [try Self.request(setup, "8400000000000021"), try Self.request(setup, "8400000000000022")],
                    dependencies: dependencies
                )
                try await withServices([pool(client, dependencies, calls: 0)]) {
                    try await eventually("the answers' jobs are queued") {
                        try await firstInt(client, "SELECT count(*)::int FROM reclaim.jobs WHERE kind = 'refund_answer' AND state = 'available'") == 2
                    }
                }
                let bundleId = try #require(
                    try await client.query("SELECT DISTINCT bundle_id FROM reclaim.refund_requests", logger: logger).decode(String.self).first { _ in
                        true
                    }
                )
                _ = try await client.withConnection(logger: logger) {
                    try await AppStopStore.stop(bundleId: bundleId, reason: "INC-7", by: "alice", connection: $0, logger: self.logger)
                }
                let queue = JobQueue(postgres: client)
                let handler = RefundAnswerJobHandler(dependencies: dependencies)
                for _ in 0..<2 {
                    let job = try #require(
                        try await queue.claimCall(kind: "refund_answer", worker: "test-worker", lease: .seconds(60), logger: logger)
                    )
                    try await run(job, handler, client: client)
                }
                #expect(standIn.consumptionAnswers.withLock { $0 }.isEmpty, "a stopped app's answer was sent")
                #expect(
                    try await firstInt(
                        client,
                        "SELECT count(*)::int FROM reclaim.refund_requests WHERE status = 'pending' AND apple_error LIKE 'held: app stopped (reclaim stop)%'"
                    ) == 2
                )
                // Each held answer looks again in 30 s, as a new job: a stop spends none of its attempts.
                #expect(
                    try await firstInt(
                        client,
                        "SELECT count(*)::int FROM reclaim.jobs WHERE kind = 'refund_answer' AND state = 'available' AND attempts = 0 AND run_at > now() + interval '25 seconds'"
                    ) == 2
                )

                // One request is older than Apple's 12 hours by the time the app is resumed; the other goes out.
                try await client.query(
                    "UPDATE reclaim.refund_requests SET requested_at = now() - interval '13 hours' WHERE transaction_id = '8400000000000022'",
                    logger: logger
                )
                _ = try await client.withConnection(logger: logger) {
                    try await AppStopStore.resume(bundleId: bundleId, by: "alice", connection: $0, logger: self.logger)
                }
                await dependencies.appStops.refresh(logger: logger)
                try await client.query("UPDATE reclaim.jobs SET run_at = now() WHERE kind = 'refund_answer' AND state = 'available'", logger: logger)
                for _ in 0..<2 {
                    let job = try #require(
                        try await queue.claimCall(kind: "refund_answer", worker: "test-worker", lease: .seconds(60), logger: logger)
                    )
                    try await run(job, handler, client: client)
                }
                #expect(standIn.consumptionAnswers.withLock { $0 }.map(\.transactionId) == ["8400000000000021"])
                let statuses = try await client.query(
                    "SELECT transaction_id, status, apple_error FROM reclaim.refund_requests ORDER BY transaction_id",
                    logger: logger
                ).decode((String, String, String?).self)
                var seen: [String: (String, String?)] = [:]
                for try await (transaction, status, error) in statuses { seen[transaction] = (status, error) }
                #expect(seen["8400000000000021"]?.0 == "sent")
                #expect(seen["8400000000000022"]?.0 == "expired")
                #expect(
                    seen["8400000000000022"]?.1?.contains("the last attempt: held: app stopped") == true,
                    "\(String(describing: seen["8400000000000022"]))"
                )
                #expect(try await firstInt(client, "SELECT refund_answers_expired FROM reclaim.app_stops") == 1)
            }
        }
    }
}
