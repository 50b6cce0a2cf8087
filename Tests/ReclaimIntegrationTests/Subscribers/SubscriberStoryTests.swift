import Foundation
import Hummingbird
import HummingbirdTesting
import PostgresNIO
import ReclaimDomain
import ReclaimService
import ReclaimStore
import ReclaimTestSupport
import Testing

/// Issue 62: one subscriber's story for support (`reclaim subscribers show`), and erasure on request
/// (`reclaim subscribers forget`), driven through the real binary as an operator runs it.
@Suite("reclaim subscribers show and forget", .poolWatchdog)
struct SubscriberStoryTests {
    let logger = TestPostgres.logger

    /// A subscriber of Apple's sandbox corpus with an offer and a skipped decision: bundle, transaction id, token.
    func subscriberWithOfferAndSkip(_ client: Database) async throws -> (bundle: String, otid: String, token: UUID) {
        try await client.withConnection(logger: logger) { connection in
            let rows = try await connection.query(
                """
                SELECT d.bundle_id, d.original_transaction_id, s.app_account_token FROM reclaim.campaign_decisions d
                JOIN reclaim.subscriptions s USING (bundle_id, environment, original_transaction_id)
                JOIN reclaim.offers o ON o.decision_id = d.id
                WHERE d.outcome = 'offered' AND s.app_account_token IS NOT NULL AND o.state IN ('ready', 'delivered')
                  AND EXISTS (SELECT 1 FROM reclaim.campaign_decisions k WHERE k.bundle_id = d.bundle_id
                                AND k.original_transaction_id = d.original_transaction_id AND k.outcome = 'skipped')
                ORDER BY d.original_transaction_id LIMIT 1
                """,
                logger: logger
            )
            for try await row in rows.decode((String, String, UUID).self) { return row }
            throw DeadlineExceeded(description: "no corpus subscriber with a live offer and a skipped decision")
        }
    }

    /// Every row of every table of the `reclaim` schema whose text holds one of `needles` (any case), by table. Each
    /// row is read as text and every base64url run in it (a JWS's segments, a nested JWS inside a decoded payload)
    /// decoded and searched too: an identifier inside a signed payload is base64url inside nested JWS, which a plain
    /// text search never matches.
    static func traces(of needles: [String], client: Database, logger: Logger) async throws -> [String: Int] {
        let tables = try await client.withConnection(logger: logger) { connection in
            var names: [String] = []
            let rows = try await connection.query(
                "SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'reclaim' ORDER BY 1",
                logger: logger
            )
            for try await name in rows.decode(String.self) { names.append(name) }
            return names
        }
        let lowered = needles.map { $0.lowercased() }
        var found: [String: Int] = [:]
        for table in tables {
            var count = 0
            let rows = try await client.query(PostgresQuery(unsafeSQL: "SELECT t::text FROM reclaim.\(table) t"), logger: logger)
            for try await row in rows.decode(String.self) {
                let text = expanded(row).lowercased()
                if lowered.contains(where: { text.contains($0) }) { count += 1 }
            }
            if count > 0 { found[table] = count }
        }
        return found
    }

    /// `text` followed by the decoding of every base64url run of 16 characters or more in it that decodes to UTF-8,
    /// each expanded again (nested JWS), up to `depth` levels.
    static func expanded(_ text: String, depth: Int = 4) -> String {
        guard depth > 0 else { return text }
        var decoded: [String] = []
        for match in text.matches(of: /[A-Za-z0-9_\-+\/]{16,}={0,2}/) {
            var segment = String(match.output).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while segment.hasSuffix("=") { segment.removeLast() }
            segment += String(repeating: "=", count: (4 - segment.count % 4) % 4)
            guard let data = Data(base64Encoded: segment), let inner = String(data: data, encoding: .utf8) else { continue }
            decoded.append(expanded(inner, depth: depth - 1))
        }
        return ([text] + decoded).joined(separator: "\n")
    }

    @Test("the census decodes what it searches: an identifier inside a nested JWS is found")
    func censusReadsInsideJWS() throws {
        let inner =
            "eyJhbGciOiJFUzI1NiJ9."
            + Data(#"{"originalTransactionId":"2000000970472825"}"#.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "") + ".c2ln"
        let outer = Data(#"{"data":{"signedTransactionInfo":"\#(inner)"}}"#.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        let row = #"(1,"{\"signedPayload\":\"eyJhbGciOiJFUzI1NiJ9.\#(outer).c2lnbmF0dXJl\"}")"#
        #expect(!row.contains("2000000970472825"))
        #expect(Self.expanded(row).contains("2000000970472825"))
    }

    struct Story: Decodable {
        struct Subscription: Decodable {
            struct Decision: Decodable {
                let campaign: String
                let outcome: String
                let reason: String
            }
            struct Offer: Decodable {
                let campaign: String?
                let state: String
            }
            let originalTransactionId: String
            let environment: String
            let decisions: [Decision]
            let offers: [Offer]
        }
        let subscriptions: [Subscription]
    }

    @Test(
        "show --json tells an offer and a skip with their reasons; forget leaves no trace in any table, no offer delivered, counts unchanged; Apple's next notification about them is dropped; forget again records nothing"
    )
    func showAndForget() async throws {
        let setup = try CampaignTestSetup()
        defer { setup.remove() }
        let corpus = try CorpusCampaignTests.corpusInSignedDateOrder()
        let reclaim = try Binaries.path("reclaim")
        try await withTestDatabase { client, url in
            let dependencies = try Dependencies.test(postgres: client, config: setup.config)
            try await processNotifications(corpus.map(\.notification.body), client: client, dependencies: dependencies)
            let (bundle, otid, token) = try await subscriberWithOfferAndSkip(client)
            let database = ["--database-url", url.connectionString]

            // show, as support runs it.
            let shown = try await runProcess(reclaim, ["subscribers", "show", "--original-transaction-id", otid, "--json"] + database)
            #expect(shown.status == 0, "\(shown.errors)")
            let story = try JSONDecoder().decode(Story.self, from: Data(shown.output.utf8))
            let subscription = try #require(story.subscriptions.first)
            #expect(story.subscriptions.count == 1)
            #expect(subscription.originalTransactionId == otid && subscription.environment == "Sandbox")
            #expect(subscription.decisions.contains { $0.outcome == "offered" && !$0.reason.isEmpty && !$0.campaign.isEmpty })
            #expect(subscription.decisions.contains { $0.outcome == "skipped" && !$0.reason.isEmpty })
            #expect(subscription.offers.contains { $0.campaign != nil && $0.state == "ready" })
            let byToken = try await runProcess(reclaim, ["subscribers", "show", "--app-account-token", token.uuidString, "--app", bundle] + database)
            #expect(
                byToken.status == 0 && byToken.output.contains(otid) && byToken.output.contains("skipped ("),
                "\(byToken.output)\(byToken.errors)"
            )

            // A webhook about their offer waits in the queue (no sender runs here): forget must not let it go out.
            try await client.transaction(logger: logger) { connection in
                let target = OutboundStore.Target(
                    kind: "webhook",
                    bundleId: bundle,
                    url: "https://hooks.example.com/reclaim",
                    environments: ["Sandbox"],
                    events: ["offer.issued"]
                )
                try await OutboundStore.sync([target], connection: connection, logger: logger)
                try await connection.query(
                    """
                    SELECT reclaim.enqueue_webhooks('offer.issued', o.bundle_id, o.environment, reclaim.offer_webhook_data(o))
                    FROM reclaim.offers o WHERE o.original_transaction_id = \(otid)
                    """,
                    logger: logger
                )
            }
            #expect(try await firstInt(client, "SELECT count(*)::int FROM reclaim.jobs WHERE kind = 'webhook'") ?? 0 > 0)

            // The identifiers to look for afterwards: both ids, and every transaction id Reclaim saw.
            var needles = [otid, token.uuidString.lowercased()]
            let transactions = try await client.query(
                "SELECT DISTINCT transaction_id FROM reclaim.notifications WHERE original_transaction_id = \(otid) AND transaction_id IS NOT NULL",
                logger: logger
            )
            for try await id in transactions.decode(String.self) { needles.append(id) }
            #expect(try await Self.traces(of: needles, client: client, logger: logger).isEmpty == false, "the subscriber is stored before")
            // Apple's latest notification about them, signed as Apple sent it: what Apple would send again.
            let payloads = try await client.query(
                "SELECT signed_payload FROM reclaim.notifications WHERE original_transaction_id = \(otid) ORDER BY signed_date DESC LIMIT 1",
                logger: logger
            )
            var latest: String?
            for try await payload in payloads.decode(String.self) { latest = payload }
            let payload = try #require(latest)
            let countsQuery = """
                SELECT (SELECT json_agg(x ORDER BY x::text) FROM reclaim.notifications_daily x)::text
                    || (SELECT json_agg(x ORDER BY x::text) FROM reclaim.subscriber_status x)::text
                    || (SELECT json_agg(x ORDER BY x::text) FROM reclaim.campaign_decisions_by_source x)::text
                """
            let countsBefore = try await Self.text(client, countsQuery, logger: logger)

            let appKey = try await TestKeys(client: client).create(scope: .app, bundleId: bundle, logger: logger)
            let app = Application(router: buildRouter(dependencies), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.router) { http in
                func offers() async throws -> Int {
                    var headers = HTTPFields()
                    headers[.authorization] = "Bearer \(appKey)"
                    return try await http.execute(uri: "/v1/offers?appAccountToken=\(token.uuidString)", method: .get, headers: headers) {
                        #expect($0.status == .ok)
                        let json = try JSONSerialization.jsonObject(with: Data(String(buffer: $0.body).utf8)) as? [String: Any]
                        return (json?["offers"] as? [Any])?.count ?? -1
                    }
                }
                #expect(try await offers() == 1, "delivered before")

                let forgotten = try await runProcess(reclaim, ["subscribers", "forget", "--original-transaction-id", otid] + database)
                #expect(forgotten.status == 0 && forgotten.output.hasPrefix("forgotten: 1 subscription"), "\(forgotten.output)\(forgotten.errors)")

                #expect(try await offers() == 0, "nothing delivered after")
            }
            let left = try await Self.traces(of: needles, client: client, logger: logger)
            #expect(left.isEmpty, "tables still naming the subscriber: \(left)")
            #expect(try await Self.text(client, countsQuery, logger: logger) == countsBefore, "aggregate counts changed")
            #expect(try await firstInt(client, "SELECT count(*)::int FROM reclaim.erasures WHERE subscriptions = 1") == 1)

            // Apple notifies about them again: the notification is kept as a count, about no one, and decides nothing.
            let again = UUID()
            try await client.withConnection(logger: logger) { connection in
                let record = NotificationRecord(
                    notificationUUID: again,
                    notificationType: "DID_CHANGE_RENEWAL_STATUS",
                    subtype: "AUTO_RENEW_DISABLED",
                    bundleId: bundle,
                    environment: "Sandbox",
                    signedDateMillis: Int64(Date().timeIntervalSince1970 * 1000),
                    originalTransactionId: otid,
                    transactionId: otid,
                    appAccountToken: token,
                    productId: "p",
                    signedPayload: payload
                )
                _ = try await NotificationStore.insert([record], connection: connection, logger: logger)
            }
            let decisionsBefore = try await firstInt(client, "SELECT count(*)::int FROM reclaim.campaign_decisions")
            try await processNotifications([], client: client, dependencies: dependencies)
            #expect(try await firstInt(client, "SELECT count(*)::int FROM reclaim.campaign_decisions") == decisionsBefore)
            #expect(
                try await firstInt(
                    client,
                    "SELECT count(*)::int FROM reclaim.notifications WHERE notification_uuid = '\(again)' AND original_transaction_id IS NULL AND signed_payload = ''"
                ) == 1,
                "kept, redacted"
            )
            #expect(try await Self.traces(of: needles, client: client, logger: logger).isEmpty)

            // Forget is idempotent: nothing left, nothing recorded again; show says when it was forgotten.
            let second = try await runProcess(reclaim, ["subscribers", "forget", "--app-account-token", token.uuidString] + database)
            #expect(second.status == 0 && second.output.hasPrefix("nothing left to forget: forgotten on"), "\(second.output)\(second.errors)")
            #expect(try await firstInt(client, "SELECT count(*)::int FROM reclaim.erasures") == 1)
            let after = try await runProcess(reclaim, ["subscribers", "show", "--original-transaction-id", otid] + database)
            #expect(after.output.contains("forgotten on request on") && after.output.contains("no subscription found"), "\(after.output)")
        }
    }

    @Test(
        "the cancel sheet of a subscriber forgotten before Apple ever told Reclaim of them answers {} and records nothing; another's is not forgotten"
    )
    func cancelSheetOfTheForgotten() async throws {
        let ca = try TestCertificateAuthority()
        let setup = try CampaignTestSetup(ca: ca, settings: CancelSheetTests.campaigns())
        defer { setup.remove() }
        try await withTestDatabase { client, url in
            try await client.withConnection(logger: logger) {
                try await CampaignStore.sync(try setup.config.domainCampaigns(), connection: $0, logger: logger)
            }
            let forgotten = "3000000000777777"
            let lookup = SubscriberLookup(.originalTransactionId(forgotten))
            let output = try await SubscriberTasks.forget(lookup, json: false, url: url, logger: logger)
            #expect(output.hasPrefix("nothing stored about this subscriber; recorded as forgotten"), "\(output)")
            try await CancelSheetTests.withServer(setup, database: client) { post in
                let premium = { (otid: String) in try CancelSheetTests.request(ca, originalTransactionId: otid, productId: CancelSheetTests.premium) }
                let answer = try await post(try premium(forgotten))
                #expect(answer.0 == .ok && answer.1 == "{}", "\(answer)")
            }
            #expect(
                try await firstInt(client, "SELECT count(*)::int FROM reclaim.cancel_sheet_decisions WHERE original_transaction_id = '\(forgotten)'")
                    == 0
            )
            // What the cancel sheet reads of each: the forgotten one is, another is not (its answer then depends on the
            // latency budget, which a loaded machine may miss, so it is not what this checks).
            for (otid, forgotten) in [(forgotten, true), ("3000000000777778", false)] {
                let context = try await client.withConnection(logger: logger) {
                    try await CancelSheetStore.context(
                        of: SubscriberKey(bundleId: "GeniusParentingAI", environment: "Sandbox", originalTransactionId: otid),
                        requestIdentifier: UUID().uuidString,
                        connection: $0,
                        logger: logger
                    )
                }
                #expect(context.forgotten == forgotten, "\(otid)")
            }
        }
    }

    @Test(
        "the cancel sheet of a subscriber never stored, asked while their erasure is under way, records nothing of them (it recorded a decision)"
    )
    func cancelSheetWhileForgetting() async throws {
        let ca = try TestCertificateAuthority()
        let setup = try CampaignTestSetup(ca: ca, settings: CancelSheetTests.campaigns())
        defer { setup.remove() }
        try await withTestDatabase { client, _ in
            try await client.withConnection(logger: logger) {
                try await CampaignStore.sync(try setup.config.domainCampaigns(), connection: $0, logger: logger)
            }
            let otid = "3000000000777779"
            let request = try CancelSheetTests.request(ca, originalTransactionId: otid, productId: CancelSheetTests.premium)
            try await CancelSheetTests.withServer(setup, database: client) { post in
                let answer = try await whileForgetting(SubscriberLookup(.originalTransactionId(otid)), client: client) { try await post(request) }
                #expect(answer.0 == .ok && answer.1 == "{}", "\(answer)")
            }
            #expect(
                try await firstInt(client, "SELECT count(*)::int FROM reclaim.cancel_sheet_decisions WHERE original_transaction_id = '\(otid)'") == 0
            )
        }
    }

    /// Columns named like an identifier that name no subscriber, and why.
    static let notIdentifying: Set<String> = [
        "api_keys.key_hash",  // an API key's hash
        "audit_log.previous_hash",  // the audit chain's link; the log names subscribers only by a keyed hash (its target)
        "app_stops.reason",  // the operator's words for a stop of a whole app
        "erasure_requests.idempotency_key",  // the backend's own request id (docs/privacy.md); the request is kept as a keyed hash
        "campaigns.paused_reason", "campaign_decisions.reason", "cancel_sheet_decisions.reason", "offers.end_reason",  // rules' words
        "cancel_flow_decisions.reason",  // rules' words
        "cancel_flow_decisions.survey_reason",  // one of the app's configured survey answers (apps[].cancelReasons)
        "refund_requests.reason",  // Apple's reason code for the request
        "refund_requests.apple_error", "offer_events.purchase_error", "offer_code_events.purchase_error",  // Apple's and StoreKit's error texts
        "cancel_flow_events.error",  // StoreKit's error text, as the app reports a failed purchase
        "grants.reason", "renewal_extensions.reason",  // the operator's kind of incentive or make-good (docs/privacy.md: kept)
        "renewal_extensions.apple_error", "renewal_extensions.extend_reason_code",  // Apple's error text, and its reason code
        // An outage make-good names a product, not a subscriber: the operator's request id and note, Apple's error.
        "mass_extensions.request_identifier", "mass_extensions.reason", "mass_extensions.apple_error", "mass_extensions.extend_reason_code",
        "offers.signature_delivered",  // a flag
        "messaging_uploads.sha256", "rejected_inputs.body_sha256", "rejected_inputs.body_size",  // messages' and refused bodies' hashes
        "forgotten_subscribers.sha256",  // the one-way hash forget keeps on purpose
    ]

    @Test("every column of the schema named like an identifier, a payload or a signature is either erased by forget or known to name no one")
    func everyIdentifyingColumnIsHandled() async throws {
        try await withTestDatabase { client, _ in
            let rows = try await client.query(
                """
                SELECT c.table_name || '.' || c.column_name FROM information_schema.columns c
                JOIN information_schema.tables t USING (table_schema, table_name)
                WHERE c.table_schema = 'reclaim' AND t.table_type = 'BASE TABLE'
                  -- ^code$: an offer code, a bearer secret once issued to someone.
                  AND c.column_name ~ '(transaction_id|account_token|payload|jws|signature|username|body|request_identifier|idempotency|nonce|sha256|reason|error|_hash|^code$)'
                """,
                logger: logger
            )
            var columns = Set<String>()
            for try await column in rows.decode(String.self) { columns.insert(column) }
            let unhandled = columns.subtracting(SubscriberErasure.identifyingColumns).subtracting(Self.notIdentifying)
            #expect(unhandled.isEmpty, "columns forget does not know: \(unhandled.sorted())")
            let stale = SubscriberErasure.identifyingColumns.subtracting(columns)
            #expect(stale.isEmpty, "listed but not in the schema: \(stale.sorted())")
        }
    }

    @Test("wrong arguments are refused with why: both ids, neither, a token that is not a UUID, a transaction id that is not Apple's")
    func arguments() async throws {
        let reclaim = try Binaries.path("reclaim")
        for (arguments, why) in [
            (["show", "--original-transaction-id", "1", "--app-account-token", UUID().uuidString], "give one of"),
            (["forget"], "give one of"),
            (["show", "--app-account-token", "not-a-uuid"], "must be a UUID"),
            (["forget", "--original-transaction-id", "12ab"], "numeric transaction id"),
            (["show", "--original-transaction-id", "1", "--environment", "Prod"], "Production or Sandbox"),
        ] {
            let run = try await runProcess(reclaim, ["subscribers"] + arguments + ["--database-url", "postgres://nobody@127.0.0.1:1/none"])
            #expect(run.status != 0 && run.errors.contains(why), "\(arguments): \(run.errors)")
        }
    }

    static func text(_ client: Database, _ sql: String, logger: Logger) async throws -> String {
        let rows = try await client.query(PostgresQuery(unsafeSQL: sql), logger: logger)
        for try await text in rows.decode(String?.self) { return text ?? "" }
        return ""
    }
}
