import Foundation
import PostgresNIO
import ReclaimDomain
import ReclaimService
import ReclaimTestSupport
import Testing

@testable import ReclaimStore

/// Issue 70: an erasure and the workers meet. A notification that arrives while `forget` runs, and whose job a worker
/// takes before the erasure commits, must not store the subscriber anew under the erased id.
@Suite("reclaim subscribers forget while the workers run", .poolWatchdog)
struct ForgetInFlightTests {
    let logger = TestPostgres.logger

    @Test("a DID_RENEW taken by a worker while the erasure is uncommitted stores no state, decision or offer under the erased id")
    func noResurrection() async throws {
        let ca = try TestCertificateAuthority()
        let setup = try CampaignTestSetup(ca: ca, settings: CancelSheetTests.campaigns())
        defer { setup.remove() }
        let notifications = TestNotifications(ca: ca, bundleId: "GeniusParentingAI", environment: "Sandbox", appAppleId: 6_747_332_178)
        let otid = "3000000000970001"
        let token = UUID()
        let expires = Int64(Date().addingTimeInterval(86400 * 20).timeIntervalSince1970 * 1000)
        @Sendable func notification(_ type: String, _ subtype: String?, at offset: TimeInterval) throws -> Data {
            try notifications.body(
                type: type,
                subtype: subtype,
                originalTransactionId: otid,
                appAccountToken: token,
                signedDate: Date().addingTimeInterval(offset),
                transactionFields: ["productId": CancelSheetTests.monthly, "expiresDate": expires]
            )
        }
        try await withTestDatabase { client, _ in
            try await client.withConnection(logger: logger) {
                try await CampaignStore.sync(try setup.config.domainCampaigns(), connection: $0, logger: logger)
            }
            let dependencies = try Dependencies.test(postgres: client, config: setup.config)
            try await processNotifications(
                [try notification("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", at: -60)],
                client: client,
                dependencies: dependencies
            )
            let traces = "SELECT (SELECT count(*) FROM reclaim.subscriptions WHERE original_transaction_id = '\(otid)')::int"
            #expect(try await firstInt(client, traces) == 1)

            let pool = WorkerPool(
                queue: JobQueue(postgres: client),
                handlers: jobHandlers(dependencies),
                options: .init(concurrency: 1, batchSize: 16, pollInterval: .milliseconds(50)),
                logger: logger
            )
            try await withServices([pool]) {
                let outcome = try await client.transaction(logger: logger) { connection in
                    let outcome = try await SubscriberErasure.forget(
                        SubscriberLookup(.originalTransactionId(otid)),
                        connection: connection,
                        logger: logger
                    )
                    // Apple renews the subscription while the erasure is not yet committed: stored, and taken by the
                    // worker, which must wait for the erasure's outcome before it reads anything.
                    try await ingestNotifications([try notification("DID_RENEW", nil, at: 0)], dependencies: dependencies)
                    try await eventually("the worker waits on the erasure", timeout: .seconds(30)) {
                        try await firstInt(
                            client,
                            """
                            SELECT count(*)::int FROM pg_stat_activity
                            WHERE wait_event_type = 'Lock' AND datname = current_database() AND pid <> pg_backend_pid()
                            """
                        ) ?? 0 >= 1
                    }
                    return outcome
                }
                #expect(outcome.subscriptions == 1)
                try await eventually("the DID_RENEW processed") {
                    try await firstInt(client, "SELECT count(*)::int FROM reclaim.jobs WHERE state <> 'completed'") == 0
                }
            }
            for (table, column) in [
                ("subscriptions", "original_transaction_id"), ("campaign_decisions", "original_transaction_id"),
                ("offers", "original_transaction_id"), ("notifications", "original_transaction_id"), ("subscriptions", "app_account_token::text"),
                ("notifications", "app_account_token::text"),
            ] {
                let needle = column.hasPrefix("app_account_token") ? token.uuidString.lowercased() : otid
                #expect(
                    try await firstInt(client, "SELECT count(*)::int FROM reclaim.\(table) WHERE \(column) = '\(needle)'") == 0,
                    "\(table).\(column) names the forgotten subscriber"
                )
            }
            #expect(try await firstInt(client, "SELECT count(*)::int FROM reclaim.notifications WHERE signed_payload = ''") == 2)
        }
    }
}

/// Issue 70: a parent's withdrawal of consent outlives the erasure of a subscriber of the account.
@Suite("reclaim subscribers forget keeps a withdrawal of consent, as a one-way hash", .poolWatchdog)
struct ForgetConsentTests {
    let logger = TestPostgres.logger

    @Test(
        "RESCIND_CONSENT, forget the account's subscriber (dry run first): no trace of the account, decoded; a later subscription of the account is still skipped for consent"
    )
    func consentSurvives() async throws {
        let ca = try TestCertificateAuthority()
        let setup = try CampaignTestSetup(ca: ca, settings: CancelSheetTests.campaigns())
        defer { setup.remove() }
        let notifications = TestNotifications(ca: ca, bundleId: "GeniusParentingAI", environment: "Sandbox", appAppleId: 6_747_332_178)
        let account = "704289572818377777"
        let (forgotten, later) = ("3000000000970201", "3000000000970202")
        let token = UUID()
        @Sendable func autoRenewOff(_ otid: String, at offset: TimeInterval) throws -> Data {
            try notifications.body(
                originalTransactionId: otid,
                appAccountToken: otid == forgotten ? token : UUID(),
                signedDate: Date().addingTimeInterval(offset),
                transactionFields: [
                    "appTransactionId": account, "productId": CancelSheetTests.monthly,
                    "expiresDate": Int64(Date().addingTimeInterval(86400 * 20).timeIntervalSince1970 * 1000),
                ]
            )
        }
        try await withTestDatabase { client, url in
            try await client.withConnection(logger: logger) {
                try await CampaignStore.sync(try setup.config.domainCampaigns(), connection: $0, logger: logger)
            }
            let dependencies = try Dependencies.test(postgres: client, config: setup.config)
            try await processNotifications(
                [
                    try autoRenewOff(forgotten, at: -120),
                    try RescindConsentTests.rescindConsent(ca, appTransactionId: account, signedDate: Date().addingTimeInterval(-60)),
                ],
                client: client,
                dependencies: dependencies
            )
            let lookup = SubscriberLookup(.originalTransactionId(forgotten))
            let preview = try await SubscriberTasks.forget(lookup, dryRun: true, json: false, url: url, logger: logger)
            #expect(preview.hasPrefix("dry run: nothing changed, nothing recorded\nwould forget: 1 subscription"), "\(preview)")
            #expect(preview.contains("  \(forgotten) [GeniusParentingAI, Sandbox]"), "\(preview)")
            #expect(preview.contains("reclaim.rescinded_consents: 1 row would be redacted"), "\(preview)")
            #expect(try await firstInt(client, "SELECT count(*)::int FROM reclaim.erasures") == 0, "a dry run records nothing")
            #expect(try await firstInt(client, "SELECT count(*)::int FROM reclaim.subscriptions WHERE original_transaction_id = '\(forgotten)'") == 1)

            let output = try await SubscriberTasks.forget(lookup, json: false, url: url, logger: logger)
            #expect(output.hasPrefix("forgotten: 1 subscription"), "\(output)")
            let left = try await SubscriberStoryTests.traces(of: [forgotten, account, token.uuidString], client: client, logger: logger)
            #expect(left.isEmpty, "traces left, decoded: \(left)")

            // The same account subscribes again: its withdrawal still holds.
            try await processNotifications([try autoRenewOff(later, at: 0)], client: client, dependencies: dependencies)
            let reasons = try await client.query(
                "SELECT outcome || ': ' || reason FROM reclaim.campaign_decisions WHERE original_transaction_id = \(later)",
                logger: logger
            )
            var decided: [String] = []
            for try await reason in reasons.decode(String.self) { decided.append(reason) }
            #expect(!decided.isEmpty && decided.allSatisfy { $0.hasPrefix("skipped: consent rescinded") }, "\(decided)")
        }
    }

    @Test("forget says plainly what it matched: an id never stored, a token naming two subscriptions")
    func matches() async throws {
        let ca = try TestCertificateAuthority()
        let setup = try CampaignTestSetup(ca: ca)
        defer { setup.remove() }
        let notifications = TestNotifications(ca: ca, bundleId: "GeniusParentingAI", environment: "Sandbox", appAppleId: 6_747_332_178)
        let token = UUID()
        try await withTestDatabase { client, url in
            let dependencies = try Dependencies.test(postgres: client, config: setup.config)
            try await processNotifications(
                try ["3000000000970301", "3000000000970302"].map {
                    try notifications.body(
                        originalTransactionId: $0,
                        appAccountToken: token,
                        transactionFields: ["productId": CancelSheetTests.monthly]
                    )
                },
                client: client,
                dependencies: dependencies
            )
            let never = try await SubscriberTasks.forget(
                SubscriberLookup(.originalTransactionId("3000000000970399")),
                json: false,
                url: url,
                logger: logger
            )
            #expect(never.hasPrefix("nothing stored about this subscriber; recorded as forgotten: later data about it will be dropped"), "\(never)")
            let both = try await SubscriberTasks.forget(
                SubscriberLookup(.appAccountToken(token)),
                dryRun: true,
                json: false,
                url: url,
                logger: logger
            )
            #expect(both.contains("the app account token matched 2 subscriptions: each would be forgotten"), "\(both)")
            #expect(both.contains("3000000000970301") && both.contains("3000000000970302"), "\(both)")
        }
    }
}

/// Issue 70: what a forgotten subscriber's notifications send to the app's other receivers, decided per receiver.
@Suite("reclaim subscribers forget and forwarding: the complete body or nothing, per receiver", .poolWatchdog)
struct ForgetForwardingTests {
    let logger = TestPostgres.logger

    @Test(
        "forget, then five DID_RENEW: a forwardForgotten receiver gets each complete body, byte for byte, and nothing of it stays; the other gets none"
    )
    func perReceiver() async throws {
        let ca = try TestCertificateAuthority()
        let keeps = TestReceiver()
        let drops = TestReceiver()
        let notifications = TestNotifications(ca: ca, bundleId: "GeniusParentingAI", environment: "Sandbox", appAppleId: 6_747_332_178)
        let otid = "3000000000970101"
        @Sendable func notification(_ type: String, _ subtype: String?, at offset: TimeInterval) throws -> Data {
            try notifications.body(
                type: type,
                subtype: subtype,
                originalTransactionId: otid,
                appAccountToken: UUID(uuidString: "00000000-0000-0000-0000-000000970101"),
                signedDate: Date().addingTimeInterval(offset),
                transactionFields: [
                    "productId": CancelSheetTests.monthly,
                    "expiresDate": Int64(Date().addingTimeInterval(86400 * 20).timeIntervalSince1970 * 1000),
                ]
            )
        }
        try await keeps.serve { keepsPort in
            try await drops.serve { dropsPort in
                let setup = try CampaignTestSetup(
                    ca: ca,
                    settings: ForwardingTests.smallServer + "\nforwarding: {allowPrivate: true}",
                    appSettings: """
                            forwarding:
                              - {url: "http://127.0.0.1:\(keepsPort)/apple", timeout: 5s}
                              - {url: "http://127.0.0.1:\(dropsPort)/apple", timeout: 5s, forwardForgotten: false}
                        """
                )
                defer { setup.remove() }
                try await withTestDatabase { client, url in
                    let server = try ServerProcess(
                        role: "all",
                        config: setup.configFile,
                        databaseURL: url.connectionString,
                        log: setup.directory.appendingPathComponent("server.log")
                    )
                    try server.start()
                    defer { server.stopInBackground() }
                    try await server.waitUntilUp()
                    let first = try notification("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", at: -60)
                    _ = try await ForwardingTests.post(first, port: server.port)
                    try await eventually("both receivers got the first notification") {
                        keeps.received.count == 1 && drops.received.count == 1
                    }
                    _ = try await SubscriberTasks.forget(SubscriberLookup(.originalTransactionId(otid)), json: false, url: url, logger: logger)
                    var renewals: [Data] = []
                    for index in 0..<5 {
                        let body = try notification("DID_RENEW", nil, at: Double(index))
                        renewals.append(body)
                        _ = try await ForwardingTests.post(body, port: server.port)
                    }
                    try await eventually("every forward settled and every notification processed", timeout: .seconds(60)) {
                        try await firstInt(client, "SELECT count(*)::int FROM reclaim.jobs WHERE state NOT IN ('completed', 'dead')") == 0
                            && keeps.received.count == 6
                    }
                    // Each complete body once (a receiver's order is not promised: forwards go several at a time).
                    let bodies = keeps.received.dropFirst().map { Data($0.body) }
                    #expect(bodies.count == renewals.count && Set(bodies) == Set(renewals), "the complete bodies, byte for byte")
                    #expect(drops.received.count == 1, "nothing about the forgotten subscriber: \(drops.received.count - 1) sent")
                    #expect(keeps.received.allSatisfy { !$0.body.isEmpty && !String(decoding: $0.body, as: UTF8.self).contains("\"\"") })
                    // Nothing of the bodies is kept: not in the notifications, not in any job.
                    #expect(try await firstInt(client, "SELECT count(*)::int FROM reclaim.notifications WHERE signed_payload <> ''") == 0)
                    #expect(
                        try await firstInt(client, "SELECT count(*)::int FROM reclaim.jobs WHERE payload::text LIKE '%eyJ%'") == 0,
                        "a job still carries a JWS"
                    )
                    #expect(try await firstInt(client, "SELECT count(*)::int FROM reclaim.jobs WHERE state = 'dead'") == 0)
                    // The census, decoded: no row of any table names them, inside a JWS or out.
                    let left = try await SubscriberStoryTests.traces(
                        of: [otid, "00000000-0000-0000-0000-000000970101"],
                        client: client,
                        logger: logger
                    )
                    #expect(left.isEmpty, "traces left, decoded: \(left)")
                }
            }
        }
    }
}
