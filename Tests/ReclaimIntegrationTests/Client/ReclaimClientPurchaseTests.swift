import Foundation
import Hummingbird
import HummingbirdTesting
import PostgresNIO
import ReclaimClient
import ReclaimDomain
import ReclaimService
import ReclaimStore
import ReclaimTestSupport
import Synchronization
import Testing

/// What ReclaimClient does without StoreKit, so that every platform tests it: how it decodes an answer, which lookup
/// it makes, and the part of a purchase around StoreKit's call (the product check, the re-fetch of a stale offer, the
/// events), against a real server over a socket.
@Suite("ReclaimClient: decoding, the lookup choice, and a purchase's checks, re-fetch and events", .poolWatchdog)
struct ReclaimClientPurchaseTests {
    let logger = TestPostgres.logger
    /// The corpus subscriber whose purchases carry an appAccountToken (offer WINBACK30).
    static let user = ReclaimClientTests.user
    /// A subscriber whose purchases carry none (OfferLookupTests).
    static let tokenless = OfferLookupTests.tokenless

    enum StoreKitStandIn: Error { case invalidOfferIdentifier }

    static func answer(environment: String, expiresAt: String) -> Data {
        Data(
            """
            {"appAccountToken": "00000000-0000-0000-0000-000000000051", "offers": [{"id": "c51d460e-0000-4000-8000-000000000001",
             "campaign": "winback", "environment": "\(environment)", "productIdentifier": "com.example.monthly",
             "offerIdentifier": "WINBACK30", "expiresAt": "\(expiresAt)",
             "storeKit1": {"keyIdentifier": "K", "nonce": "6f1d2c3b-0000-4000-8000-000000000051", "timestamp": 1795709006778,
                           "signature": "MEQ=", "applicationUsername": ""},
             "storeKit2": {"compactJWS": "a.b.c"}}]}
            """.utf8
        )
    }

    /// A server that answers `GET /v1/offers` with `body`.
    static func serving(_ body: Data, _ test: @Sendable (ReclaimClient) async throws -> Void) async throws {
        let router = Router()
        router.get("/v1/offers") { _, _ -> Response in
            Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { http in
            try await test(ReclaimClient(baseURL: URL(string: "http://127.0.0.1:\(try #require(http.port))")!, appKey: "k"))
        }
    }

    @Test("expiresAt decodes to a Date (with or without fractional seconds); an unknown environment is kept, not an error")
    func decoding() async throws {
        try await Self.serving(Self.answer(environment: "Sandbox", expiresAt: "2026-12-03T16:03:25Z")) { reclaim in
            let offer = try #require(try await reclaim.pendingOffers(appAccountToken: Self.user).first)
            #expect(offer.environment == .sandbox)
            #expect(offer.expiresAt == Date(timeIntervalSince1970: 1_796_313_805))
            #expect(offer.signedAt == Date(timeIntervalSince1970: 1_795_709_006.778))
        }
        try await Self.serving(Self.answer(environment: "Xcode", expiresAt: "2026-12-03T16:03:25.250Z")) { reclaim in
            let offers = try await reclaim.pendingOffers(appAccountToken: Self.user)
            let offer = try #require(offers.first)
            #expect(offers.count == 1, "an environment the client does not know fails nothing")
            #expect(offer.environment == .other("Xcode") && offer.environment.rawValue == "Xcode")
            #expect(abs(offer.expiresAt.timeIntervalSince1970 - 1_796_313_805.25) < 0.001)
        }
        try await Self.serving(Self.answer(environment: "Production", expiresAt: "next tuesday")) { reclaim in
            await #expect(throws: ReclaimClientError.self) { _ = try await reclaim.pendingOffers(appAccountToken: Self.user) }
        }
        #expect(PendingOffer.Environment(rawValue: "Production") == .production)
    }

    @Test(
        "the client picks the lookup: the token's offers when it has some; else the signed transactions (a user whose purchase predates the token, or none); a failed lookup does not stop the next"
    )
    func lookupChoice() async throws {
        let ca = try TestCertificateAuthority(leafValidity: Date().addingTimeInterval(-90 * 86_400)...Date().addingTimeInterval(365 * 86_400))
        let setup = try CampaignTestSetup(ca: ca, userTokenSecret: UserTokenTests.secret)
        defer { setup.remove() }
        try await withProcessedCorpus(setup) { client, dependencies in
            let notifications = TestNotifications(ca: ca, bundleId: "GeniusParentingAI", environment: "Sandbox", appAppleId: 6_747_332_178)
            let lapse = try notifications.body(type: "EXPIRED", subtype: "VOLUNTARY", originalTransactionId: Self.tokenless, appAccountToken: nil)
            try await processNotifications([lapse], client: client, dependencies: dependencies)
            let transaction = try ca.sign(json: [
                "originalTransactionId": Self.tokenless, "transactionId": Self.tokenless, "bundleId": "GeniusParentingAI",
                "productId": "ca.geniusparentingai.basic.monthly", "environment": "Sandbox",
                "signedDate": Int64(Date().timeIntervalSince1970 * 1000) - 40 * 86_400_000, "type": "Auto-Renewable Subscription",
            ])
            let appKey = try await TestKeys(client: client).create(scope: .app, bundleId: "GeniusParentingAI", logger: logger)
            let app = Application(router: buildRouter(dependencies), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.live) { http in
                let base = URL(string: "http://127.0.0.1:\(try #require(http.port))")!
                @Sendable func client(for user: UUID) -> ReclaimClient {
                    ReclaimClient(baseURL: base, appKey: appKey) { try await UserTokenTests.token(for: user.uuidString.lowercased(), expiresIn: 600) }
                }
                let transactionsAsked = Mutex(0)
                let transactions: @Sendable () async throws -> [String] = {
                    transactionsAsked.withLock { $0 += 1 }
                    return [transaction, transaction]
                }

                // A signed-in user with offers by token: those, and StoreKit is not asked.
                let byToken = try await client(for: Self.user).pendingOffers(appAccountToken: Self.user, signedTransactions: transactions)
                #expect(byToken.map(\.offerIdentifier) == ["WINBACK30"])
                #expect(transactionsAsked.withLock { $0 } == 0)

                // A signed-in user whose purchase predates the token: nothing by token, the transaction finds the offer
                // (asked once though given twice), and the offer can be fetched again that way.
                let signedIn = UUID()
                let reclaim = client(for: signedIn)
                let found = try await reclaim.pendingOffers(appAccountToken: signedIn, signedTransactions: transactions)
                let offer = try #require(found.first)
                #expect(found.count == 1 && offer.offerIdentifier == "WINBACK30")
                #expect(try await reclaim.pendingOffers(appAccountToken: signedIn).isEmpty)
                #expect(transactionsAsked.withLock { $0 } == 1)
                let again = try #require(try await reclaim.refreshed(offer))
                #expect(again.id == offer.id && again.storeKit1.nonce != offer.storeKit1.nonce, "fetched afresh, by the transaction")

                // No token: the transactions only.
                #expect(try await reclaim.pendingOffers(appAccountToken: nil, signedTransactions: transactions).map(\.id) == [offer.id])

                // The token lookup fails (the backend cannot vouch for the user): the transaction still finds the offer.
                struct BackendDown: Error {}
                let noBackend = ReclaimClient(baseURL: base, appKey: appKey) { throw BackendDown() }
                #expect(try await noBackend.pendingOffers(appAccountToken: signedIn, signedTransactions: transactions).map(\.id) == [offer.id])
                // Nothing found and a lookup failed: its error, not an empty list.
                await #expect(throws: BackendDown.self) {
                    _ = try await noBackend.pendingOffers(appAccountToken: signedIn) { [] }
                }
                await #expect(throws: ReclaimClientError.self) {
                    _ = try await reclaim.pendingOffers(appAccountToken: nil) { ["not.a.transaction"] }
                }
                // Nothing found, nothing failed: empty.
                #expect(try await reclaim.pendingOffers(appAccountToken: signedIn) { [] }.isEmpty)
            }
        }
    }

    @Test(
        "a purchase: the offer must be for the product; a stale one, or one already given to a purchase, is fetched again first; started, then pending or failed with StoreKit's error, reach the server in the background"
    )
    func purchase() async throws {
        let setup = try CampaignTestSetup()
        defer { setup.remove() }
        try await withProcessedCorpus(setup) { client, dependencies in
            let appKey = try await TestKeys(client: client).create(scope: .app, bundleId: "GeniusParentingAI", logger: logger)
            let app = Application(router: buildRouter(dependencies), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.live) { http in
                let base = URL(string: "http://127.0.0.1:\(try #require(http.port))")!
                // An app left running 21 hours: the offers it fetched now are stale by then.
                let later = ReclaimClient(baseURL: base, appKey: appKey, now: { Date().addingTimeInterval(21 * 3600) })
                let offer = try #require(try await later.pendingOffers(appAccountToken: Self.user).first)
                #expect(offer.signatureIsStale(at: Date().addingTimeInterval(21 * 3600)) && !offer.signatureIsStale())
                let outcome = try await Self.buy(offer, with: later, productID: offer.productIdentifier) { _ in .purchasePending }
                #expect(outcome.id == offer.id && outcome.storeKit1.nonce != offer.storeKit1.nonce, "bought with fresh signatures")
                #expect(abs(outcome.signedAt.timeIntervalSinceNow) < 60)
                await later.backgroundEventsSent()

                // StoreKit throws: purchase_failed with its error, and the error reaches the caller.
                let now = ReclaimClient(baseURL: base, appKey: appKey)
                let fresh = try #require(try await now.pendingOffers(appAccountToken: Self.user).first)
                await #expect(throws: StoreKitStandIn.self) {
                    _ = try await Self.buy(fresh, with: now, productID: fresh.productIdentifier) { _ in throw StoreKitStandIn.invalidOfferIdentifier }
                }
                await now.backgroundEventsSent()
                let rows = try await client.query(
                    "SELECT event, purchase_error FROM reclaim.offer_events WHERE offer_id = \(try #require(UUID(uuidString: offer.id))) ORDER BY occurred_at, event",
                    logger: logger
                )
                var events: [String] = []
                var failure: String?
                for try await (event, error) in rows.decode((String, String?).self) {
                    events.append(event)
                    if event == "purchase_failed" { failure = error }
                }
                #expect(events == ["purchase_started", "purchase_pending", "purchase_failed"])
                #expect(failure?.hasSuffix("StoreKitStandIn.invalidOfferIdentifier") == true, "\(failure ?? "none")")
                // Tapped again after that failure: Apple takes a signature and nonce "for one buy request, even if the
                // buy fails", so the offer is fetched again first, and StoreKit gets a new nonce.
                let retried = try await Self.buy(fresh, with: now, productID: fresh.productIdentifier) { _ in .dismissed }
                #expect(retried.id == fresh.id && retried.storeKit1.nonce != fresh.storeKit1.nonce, "a retry reused a spent nonce")
                let again = try await Self.buy(retried, with: now, productID: retried.productIdentifier) { _ in .dismissed }
                #expect(again.storeKit1.nonce != retried.storeKit1.nonce, "a second retry reused a spent nonce")

                // Another product's offer: refused before StoreKit, nothing reported.
                await #expect(throws: ReclaimClientError.offerForAnotherProduct(offerProduct: fresh.productIdentifier, product: "other")) {
                    _ = try await Self.buy(fresh, with: now, productID: "other") { _ in nil }
                }
                // The error as the server takes it: its full name, no NUL, at most 256 characters; recorded as is.
                struct Long: Error, CustomDebugStringConvertible { var debugDescription: String { "a\u{0}" + String(repeating: "é", count: 300) } }
                let described = try #require(ReclaimClient.describe(Long()))
                #expect(described.unicodeScalars.count == 255 && !described.utf8.contains(0))
                let another = try #require(try await ReclaimClient(baseURL: base, appKey: appKey).pendingOffers(appAccountToken: Self.user).first)
                try await now.record(.purchaseFailed, for: another, error: Long())
                // Stale, and Reclaim no longer delivers it: offerNoLongerAvailable, and StoreKit is not asked.
                let stale = try #require(try await later.pendingOffers(appAccountToken: Self.user).first)
                let staleId = try #require(UUID(uuidString: stale.id))
                try await client.query(
                    "UPDATE reclaim.offers SET deliverable_until = now() - interval '1 second' WHERE id = \(staleId)",
                    logger: logger
                )
                await #expect(throws: ReclaimClientError.offerNoLongerAvailable(id: stale.id)) {
                    _ = try await Self.buy(stale, with: later, productID: stale.productIdentifier) { _ in
                        Issue.record("StoreKit was asked with an offer that has ended")
                        return nil
                    }
                }

            }
        }
    }

    /// The portable part of a purchase, with `storeKit` standing in for StoreKit's call: the offer it was given, and
    /// the event `storeKit` makes of the purchase.
    @MainActor
    static func buy(
        _ offer: PendingOffer,
        with reclaim: ReclaimClient,
        productID: String,
        storeKit: (PendingOffer) async throws -> OfferEvent?
    ) async throws -> PendingOffer {
        let (used, _) = try await reclaim.purchase(offer, productID: productID) { ready in
            (ready, try await storeKit(ready))
        } event: {
            $0.1
        }
        return used
    }
}
