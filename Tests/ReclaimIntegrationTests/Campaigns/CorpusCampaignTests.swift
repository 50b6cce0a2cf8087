import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import ReclaimDomain
import ReclaimService
import ReclaimStore
import ReclaimTestSupport
import Testing

@Suite("The real sandbox corpus through ingest, queue, state, campaigns and offers", .poolWatchdog)
struct CorpusCampaignTests {
    let logger = TestPostgres.logger

    static func corpusInSignedDateOrder() throws -> [(notification: AppleSandboxFixtures.Notification, signedDate: Int64)] {
        try AppleSandboxFixtures.all().map { notification in
            var segment = notification.signedPayload.split(separator: ".")[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(
                of: "_",
                with: "/"
            )
            segment += String(repeating: "=", count: (4 - segment.count % 4) % 4)
            let payload = try #require(Data(base64Encoded: segment))
            let signedDate = try JSONDecoder().decode(SignedDateOnly.self, from: payload).signedDate
            return (notification, signedDate)
        }.sorted { $0.signedDate < $1.signedDate }
    }

    struct SignedDateOnly: Decodable { let signedDate: Int64 }

    @Test("expected offers, resubscribers' offers withdrawn, nothing issued twice, every signature verifies independently")
    func corpusReplay() async throws {
        try await withTestDatabase { client, _ in try await Self.replayCorpus(on: client) }
    }

    /// The corpus replay's checks on `client`'s database (a fresh one, or one upgraded by migrations/: MigratorTests).
    static func replayCorpus(on client: Database) async throws {
        let logger = TestPostgres.logger
        let setup = try CampaignTestSetup()
        defer { setup.remove() }
        let corpus = try Self.corpusInSignedDateOrder()
        do {
            let dependencies = try Dependencies.test(postgres: client, config: setup.config)
            try await processNotifications(corpus.map(\.notification.body), client: client, dependencies: dependencies)

            // The subscriber expired voluntarily 9 times and turned auto-renew off twice, resubscribing after
            // each but the last expiry. Win-back offered 7 times; twice it met the live retention offer
            // (priority 10 ≥ 5) and was skipped. Every offer but the last was withdrawn on resubscription.
            let counts = try await decisionCounts(client)
            #expect(counts == ["retain-auto-renew-off/offered": 2, "winback-expired/offered": 7, "winback-expired/skipped": 2])
            let offers = try await OfferRow.all(client)
            #expect(offers.count == 9)
            #expect(offers.filter { $0.state == "withdrawn" }.count == 8)
            #expect(offers.filter { $0.state == "withdrawn" }.allSatisfy { $0.endReason?.contains("subscribed again") == true })
            let live = try #require(offers.last)
            #expect(live.state == "ready")
            #expect(live.campaignId == "winback-expired")
            #expect(live.applicationUsername == "00000000-0000-0000-0000-000000000051")

            var stateRows = try await client.query(
                """
                SELECT status, expiration_intent, auto_renew, storefront FROM reclaim.subscriptions
                WHERE bundle_id = 'GeniusParentingAI' AND environment = 'Sandbox' AND original_transaction_id = '2000000970472825'
                """,
                logger: logger
            ).decode((String, Int16?, Bool?, String?).self).makeAsyncIterator()
            let row = try #require(try await stateRows.next())
            let state = (
                status: SubscriptionState.Status(rawValue: row.0), expirationIntent: row.1.map(Int.init), autoRenew: row.2, storefront: row.3
            )
            #expect(state.storefront == "CAN")

            // Replayed through HTTP: duplicates, no new jobs. Replayed straight into the engine (as a retried
            // job would be): the state refuses the stale snapshots and the decisions exist, so nothing new.
            let before = try await decisionCounts(client)
            try await processNotifications(corpus.map(\.notification.body), client: client, dependencies: dependencies)
            for snapshot in try await snapshots(of: corpus.map(\.notification), verifier: dependencies.verifier) {
                try await client.transaction(logger: logger) { connection in
                    try await dependencies.campaignEngine.process(snapshot, connection: connection, logger: logger)
                }
            }
            #expect(try await decisionCounts(client) == before)
            #expect(try await OfferRow.all(client).count == 9)

            // Every stored signature, checked by Python's cryptography over Apple's exact payload.
            let checks = offers.map { offer in
                PythonCrossCheck.Offer(
                    payload: [
                        "GeniusParentingAI", offer.keyId, offer.productId, offer.offerIdentifier, offer.applicationUsername,
                        offer.nonce.uuidString.lowercased(), String(Int64((offer.signedAt.timeIntervalSince1970 * 1000).rounded())),
                    ].joined(separator: "\u{2063}"),
                    signature: offer.storeKit1Signature,
                    jws: offer.storeKit2JWS,
                    expectedClaims: [
                        "iss": CampaignTestSetup.issuerId, "bid": "GeniusParentingAI", "productId": offer.productId,
                        "offerIdentifier": offer.offerIdentifier, "nonce": offer.nonce.uuidString.lowercased(),
                        "transactionId": "2000000970472825",
                    ]
                )
            }
            #expect(try await PythonCrossCheck.verify(checks, publicKeyPEM: setup.key.publicKey.pemRepresentation, keyId: "TESTKEY001") == 9)
        }
    }

    @Test("campaigns are mirrored into reclaim.campaigns; a campaign removed from the config is disabled")
    func campaignMirror() async throws {
        let setup = try CampaignTestSetup()
        defer { setup.remove() }
        try await withTestDatabase { client, _ in
            let campaigns = try setup.config.domainCampaigns()
            try await client.transaction(logger: logger) { try await CampaignStore.sync(campaigns, connection: $0, logger: logger) }
            try await client.transaction(logger: logger) { try await CampaignStore.sync(Array(campaigns.prefix(1)), connection: $0, logger: logger) }
            let rows = try await client.query(
                "SELECT id, enabled, trigger, extract(epoch FROM deliverable_for)::bigint FROM reclaim.campaigns ORDER BY id",
                logger: logger
            )
            var seen: [String] = []
            for try await (id, enabled, trigger, seconds) in rows.decode((String, Bool, String, Int64).self) {
                seen.append("\(id) \(enabled) \(trigger) \(seconds)")
            }
            #expect(
                seen == [
                    "retain-auto-renew-off true DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED 172800000",
                    "winback-expired false EXPIRED/VOLUNTARY 172800000",
                ]
            )
        }
    }

    @Test("reclaim campaigns simulate, without a database, decides what the workers decided on the same corpus")
    func simulateMatchesWorkers() async throws {
        let setup = try CampaignTestSetup()
        defer { setup.remove() }
        let directory = try #require(AppleSandboxFixtures.directory)
        let report = try await CampaignTasks.simulate(setup.config, directory: directory, now: nil)
        func count(_ text: String) -> Int { report.components(separatedBy: text).count - 1 }
        #expect(report.hasPrefix("110 notifications about subscriptions replayed, 6 without one (TEST, summaries), 0 refused"), "\(report)")
        #expect(count("retain-auto-renew-off: offered") == 2)
        #expect(count("winback-expired: offered") == 7)
        #expect(count("winback-expired: skipped: one offer at a time") == 2)
        #expect(count("withdrawn: ") == 8)
        #expect(report.contains("→ would now hold: winback-expired (ca.geniusparentingai.basic.monthly / WINBACK30)"))
    }

    @Test("reclaim campaigns simulate shows an experiment's arm on every decision, the same arm the workers record")
    func simulateShowsVariants() async throws {
        let setup = try CampaignTestSetup(
            winbackOffer: CampaignTestSetup.winbackExperiment
        )
        defer { setup.remove() }
        let directory = try #require(AppleSandboxFixtures.directory)
        let report = try await CampaignTasks.simulate(setup.config, directory: directory, now: nil)
        let arm = VariantAssignment.variant(
            of: try setup.config.domainCampaigns().first { $0.id == "winback-expired" }?.variants ?? [],
            originalTransactionId: "2000000970472825",
            campaignId: "winback-expired",
            earlier: nil
        )
        let id = try #require(arm?.id)
        #expect(report.components(separatedBy: "winback-expired: offered: eligible (variant \(id))").count - 1 == 7, "\(report)")
        #expect(report.contains("→ would now hold: winback-expired (ca.geniusparentingai.basic.monthly / \(arm?.offerIdentifier ?? ""))"))
        #expect(try await CampaignTasks.check(setup.config).contains("winback-expired [GeniusParentingAI] on EXPIRED/VOLUNTARY → thirty "))
    }

    @Test("reclaim campaigns simulate shows when a delayed campaign would fire, and decides nothing for it at the trigger")
    func simulateShowsDelays() async throws {
        let setup = try CampaignTestSetup(
            winbackOffer: "offer: {productId: ca.geniusparentingai.basic.monthly, offerIdentifier: WINBACK30}\n    delay: 7d"
        )
        defer { setup.remove() }
        let directory = try #require(AppleSandboxFixtures.directory)
        let report = try await CampaignTasks.simulate(setup.config, directory: directory, now: nil)
        #expect(report.components(separatedBy: "winback-expired: scheduled: fires ").count - 1 == 9, "the 9 voluntary expirations: \(report)")
        #expect(!report.contains("winback-expired: offered"))
    }
}
