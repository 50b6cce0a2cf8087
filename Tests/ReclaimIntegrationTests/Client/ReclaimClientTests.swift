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

@Suite("ReclaimClient, the app-side library, against a real server over a socket", .poolWatchdog)
struct ReclaimClientTests {
    let logger = TestPostgres.logger
    static let user = UUID(uuidString: "00000000-0000-0000-0000-000000000051")!

    @Test("offers decoded and mapped for StoreKit; an event recorded once; a wrong key is unauthorized")
    func againstReclaim() async throws {
        let setup = try CampaignTestSetup()
        defer { setup.remove() }
        try await withProcessedCorpus(setup) { client, dependencies in
            let keys = TestKeys(client: client)
            let appKey = try await keys.create(scope: .app, bundleId: "GeniusParentingAI", name: "client-test", logger: logger)
            let app = Application(router: buildRouter(dependencies), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.live) { http in
                let base = URL(string: "http://127.0.0.1:\(try #require(http.port))")!
                let reclaim = ReclaimClient(baseURL: base, appKey: appKey)
                let offers = try await reclaim.pendingOffers(appAccountToken: Self.user)
                let offer = try #require(offers.first)
                #expect(offers.count == 1)
                #expect(offer.offerIdentifier == "WINBACK30")
                #expect(offer.environment == .sandbox)
                let until = try await client.query(
                    "SELECT deliverable_until FROM reclaim.offers WHERE id = \(try #require(UUID(uuidString: offer.id)))",
                    logger: logger
                )
                for try await deliverableUntil in until.decode(Date.self) {
                    #expect(abs(offer.expiresAt.timeIntervalSince(deliverableUntil)) < 1, "expiresAt is deliverable_until, as a Date")
                }
                #expect(abs(offer.signedAt.timeIntervalSinceNow) < 60 && !offer.signatureIsStale())
                let mapped = try StoreKitPromotionalOffer(offer)
                #expect(mapped.appAccountToken == Self.user)
                #expect(offer.storeKit1.applicationUsername == "00000000-0000-0000-0000-000000000051", "lowercase, as signed")
                #expect(mapped.nonce.uuidString.lowercased() == offer.storeKit1.nonce)
                #expect(Int64(mapped.timestamp) == offer.storeKit1.timestamp)
                #expect(abs(Double(mapped.timestamp) / 1000 - Date().timeIntervalSince1970) < 3600, "milliseconds, and fresh")
                #expect(mapped.signature == Data(base64Encoded: offer.storeKit1.signature))
                #expect(
                    setup.signer.verify(
                        .init(
                            keyIdentifier: mapped.keyIdentifier,
                            nonce: offer.storeKit1.nonce,
                            timestamp: Int64(mapped.timestamp),
                            signature: mapped.signatureBase64,
                            applicationUsername: offer.storeKit1.applicationUsername
                        ),
                        product: offer.productIdentifier,
                        offer: mapped.offerIdentifier
                    )
                )

                try await reclaim.record(.shown, for: offer)
                // Revoked now: a second report of the same event would be refused if it were sent; it is not.
                let id = try #require(try await keys.list(bundleId: "GeniusParentingAI", logger: logger).first { $0.name == "client-test" }?.id)
                #expect(try await keys.revoke(id: id, logger: logger))
                try await reclaim.record(.shown, for: offer)

                let stranger = ReclaimClient(baseURL: base, appKey: "rk_app_wrong")
                await #expect(throws: ReclaimClientError.self) { _ = try await stranger.pendingOffers(appAccountToken: Self.user) }
                do {
                    _ = try await stranger.pendingOffers(appAccountToken: Self.user)
                } catch let error as ReclaimClientError {
                    guard case .unauthorized = error else {
                        Issue.record("expected unauthorized, got \(error)")
                        return
                    }
                }
            }
            let rows = try await client.query("SELECT count(*)::bigint FROM reclaim.offer_events WHERE event = 'shown'", logger: logger)
            for try await count in rows.decode(Int64.self) { #expect(count == 1) }
        }
    }

    @Test("a 5xx is retried with backoff and then reported with its problem type; a slow server times out")
    func failures() async throws {
        let calls = Mutex(0)
        let router = Router()
        router.get("/v1/offers") { _, _ -> Response in
            calls.withLock { $0 += 1 }
            return Response(
                status: .serviceUnavailable,
                headers: [.contentType: "application/problem+json"],
                body: .init(
                    byteBuffer: ByteBuffer(string: #"{"type":"urn:reclaim:problem:database-unavailable","title":"t","status":503,"detail":"down"}"#)
                )
            )
        }
        router.get("/slow/v1/offers") { _, _ -> Response in
            try await Task.sleep(for: .seconds(3))
            return Response(status: .ok)
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { http in
            let base = URL(string: "http://127.0.0.1:\(try #require(http.port))")!
            do {
                _ = try await ReclaimClient(baseURL: base, appKey: "k", maxAttempts: 3).pendingOffers(appAccountToken: Self.user)
                Issue.record("a 503 was not reported")
            } catch let error as ReclaimClientError {
                #expect(error == .server(status: 503, type: "urn:reclaim:problem:database-unavailable", detail: "down"))
            }
            #expect(calls.withLock { $0 } == 3)
            let started = Date()
            do {
                _ = try await ReclaimClient(baseURL: base.appendingPathComponent("slow"), appKey: "k", timeout: 0.5, maxAttempts: 1)
                    .pendingOffers(appAccountToken: Self.user)
                Issue.record("a slow server did not time out")
            } catch let error as ReclaimClientError {
                #expect(error == .timedOut)
            }
            #expect(Date().timeIntervalSince(started) < 2.5)
        }
    }

    @Test("the user token comes from the provider: asked once, cached, and asked again exactly once per request after a 401")
    func userTokenRefresh() async throws {
        let setup = try CampaignTestSetup(userTokenSecret: UserTokenTests.secret)
        defer { setup.remove() }
        let user = Self.user.uuidString.lowercased()
        try await withProcessedCorpus(setup) { client, dependencies in
            let appKey = try await TestKeys(client: client).create(scope: .app, bundleId: "GeniusParentingAI", logger: logger)
            let app = Application(router: buildRouter(dependencies), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.live) { http in
                let base = URL(string: "http://127.0.0.1:\(try #require(http.port))")!
                // The backend's tokens, made by Python's hmac: the first has expired, the next ones are good.
                let tokens = await Mutex([try UserTokenTests.token(for: user, expiresIn: -10), try UserTokenTests.token(for: user, expiresIn: 600)])
                let asked = Mutex(0)
                let reclaim = ReclaimClient(baseURL: base, appKey: appKey) {
                    asked.withLock { $0 += 1 }
                    return tokens.withLock { $0.count > 1 ? $0.removeFirst() : $0[0] }
                }
                #expect(try await reclaim.pendingOffers(appAccountToken: Self.user).map(\.offerIdentifier) == ["WINBACK30"])
                #expect(asked.withLock { $0 } == 2, "asked for a token, refused (expired), asked once more")
                #expect(try await reclaim.pendingOffers(appAccountToken: Self.user).count == 1)
                #expect(asked.withLock { $0 } == 2, "the good token is kept")

                // A provider whose tokens are always refused: asked once, then once more after the 401, and the
                // 401 reaches the caller with its problem type; a second request does the same, no more.
                let refusedAsked = Mutex(0)
                let refused = ReclaimClient(baseURL: base, appKey: appKey) {
                    refusedAsked.withLock { $0 += 1 }
                    return "0.not-a-token"
                }
                for attempt in 1...2 {
                    do {
                        _ = try await refused.pendingOffers(appAccountToken: Self.user)
                        Issue.record("a refused token was not reported")
                    } catch ReclaimClientError.unauthorized(let type, _) {
                        #expect(type == "urn:reclaim:problem:invalid-user-token")
                    }
                    #expect(refusedAsked.withLock { $0 } == 2 * attempt)
                }

                // A wrong app key is a 401 too, but not the user token's: the provider is not asked again.
                let wrongKeyAsked = Mutex(0)
                let wrongKey = ReclaimClient(baseURL: base, appKey: "rk_app_wrong") {
                    wrongKeyAsked.withLock { $0 += 1 }
                    return try await UserTokenTests.token(for: user, expiresIn: 600)
                }
                await #expect(throws: ReclaimClientError.self) { _ = try await wrongKey.pendingOffers(appAccountToken: Self.user) }
                #expect(wrongKeyAsked.withLock { $0 } == 1)
            }
        }
    }
}

/// A deadline around the lookup (docs/ios.md, step 7) cancels it: the client stops there, instead of going on to the
/// subscription group's transactions, which the app's deadline has already given up on.
@Suite("ReclaimClient stops a cancelled lookup", .poolWatchdog)
struct ReclaimClientCancellationTests {
    @Test("cancelled while Reclaim does not answer: CancellationError, and the signed-transaction lookups are not asked for")
    func cancelledLookupStops() async throws {
        // A listener that never accepts: the kernel completes each connection, and no answer ever comes.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        try #require(bound && listen(fd, 16) == 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        let port = Int(UInt16(bigEndian: address.sin_port))

        let reclaim = ReclaimClient(baseURL: URL(string: "http://127.0.0.1:\(port)")!, appKey: "rk_app_unanswered", timeout: 2, maxAttempts: 3)
        let asked = Mutex(false)
        let lookup = Task {
            try await reclaim.pendingOffers(appAccountToken: UUID()) {
                asked.withLock { $0 = true }
                return ["a.signed.transaction"]
            }
        }
        try await Task.sleep(for: .milliseconds(300))
        lookup.cancel()
        await #expect(throws: CancellationError.self) { _ = try await lookup.value }
        #expect(asked.withLock { $0 } == false, "the cancelled lookup went on to the subscription group's transactions")
    }
}
