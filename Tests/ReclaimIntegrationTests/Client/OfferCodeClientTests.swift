import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import ReclaimClient
import ReclaimDomain
import ReclaimStore
import ReclaimTestSupport
import Testing

@testable import ReclaimService

/// Offer codes in the app, opt-in: a 2.0 client (which decodes `storeKit1` and `storeKit2` as required in every element)
/// keeps getting offers only; 2.1 asks with `include=offerCodes`, decodes codes as their own type, skips kinds it does
/// not know, and records events for a code.
@Suite("Offer codes in the app: 2.0 clients unbroken, 2.1 gets codes when it asks", .poolWatchdog)
struct OfferCodeClientTests {
    static let logger = TestPostgres.logger
    static let token = UUID(uuidString: "00000000-0000-0000-0000-0000000c0de5")!

    @Test(
        "with a promotional offer and a code live for one app user: 2.0's pendingOffers decodes the offer alone; 2.1 gets both; the code's events are recorded; an element of an unknown kind is skipped"
    )
    func twoClients() async throws {
        let ca = try TestCertificateAuthority()
        let files = try TestAppFiles(ca: ca, keyId: "CODEKEY001", prefix: "reclaim-code-client")
        defer { files.remove() }
        let directory = files.directory
        let app = OfferCodeTests.app
        let config = try ReclaimConfig.parse(
            yaml: """
                apps:
                \(files.app(app, keyId: "CODEKEY001"))
                campaigns:
                  - id: retain
                    app: \(app)
                    trigger: DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED
                    offer: {productId: com.example.monthly, offerIdentifier: RETAIN50}
                    deliverableFor: 30d
                  - id: winback-codes
                    app: \(app)
                    trigger: EXPIRED/VOLUNTARY
                    offer: {offerCodes: \(OfferCodeTests.offer)}
                    deliverableFor: 30d
                """
        )
        let notifications = TestNotifications(ca: ca, bundleId: app)
        try await withTestDatabase { client, url in
            _ = try await CodeTasks.importCodes(
                OfferCodeTests.importRequest(file: try OfferCodeTests.codeFile(directory, prefix: "APP", count: 3)),
                config: config,
                url: url,
                logger: Self.logger
            )
            let dependencies = try Dependencies.test(postgres: client, config: config)
            let now = Date().addingTimeInterval(-600)
            let millis = Int64(now.timeIntervalSince1970 * 1000)
            // One app user, two subscriptions: one turns auto-renew off (a signed offer), the other lapses (a code).
            try await processNotifications(
                [
                    try notifications.body(
                        originalTransactionId: "6200000000000001",
                        appAccountToken: Self.token,
                        signedDate: now,
                        transactionFields: ["purchaseDate": millis - 86_400_000, "expiresDate": millis + 20 * 86_400_000]
                    ),
                    try notifications.body(
                        type: "EXPIRED",
                        subtype: "VOLUNTARY",
                        originalTransactionId: "6200000000000002",
                        appAccountToken: Self.token,
                        signedDate: now,
                        transactionFields: ["purchaseDate": millis - 40 * 86_400_000, "expiresDate": millis - 60_000],
                        status: 2
                    ),
                ],
                client: client,
                dependencies: dependencies
            )
            let issued = try await OfferCodeTests.strings(client, "SELECT code FROM reclaim.offer_codes WHERE decision_id IS NOT NULL")
            #expect(issued.count == 1)
            let appKey = try await TestKeys(client: client).create(scope: .app, bundleId: app, logger: Self.logger)
            let server = Application(router: buildRouter(dependencies), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await server.test(.live) { http in
                let base = URL(string: "http://127.0.0.1:\(try #require(http.port))")!
                let reclaim = ReclaimClient(baseURL: base, appKey: appKey)

                // 2.0: the call apps already ship, which sends no include; every element decodes as an offer.
                let shipped = try await reclaim.pendingOffers(appAccountToken: Self.token)
                #expect(shipped.map(\.offerIdentifier) == ["RETAIN50"])

                // 2.1: asks, and gets both; the code is its own type.
                let both = try await reclaim.pendingOffersAndCodes(appAccountToken: Self.token)
                #expect(both.offers.map(\.offerIdentifier) == ["RETAIN50"])
                let code = try #require(both.codes.first)
                #expect(both.codes.count == 1 && [code.code] == issued && code.offerIdentifier == OfferCodeTests.offer)
                #expect(code.redemptionURL.absoluteString == "https://apps.apple.com/redeem?ctx=offercodes&id=1234567890&code=\(code.code)")
                #expect(code.productIdentifier == "com.example.monthly" && code.campaign == "winback-codes" && code.expiresAt > Date())

                // What the app did with the code, recorded once per event under its decision.
                try await reclaim.record(.shown, for: code)
                try await reclaim.record(.purchaseStarted, for: code)
                try await reclaim.record(.shown, for: code)
                #expect(
                    try await OfferCodeTests.strings(client, "SELECT event FROM reclaim.offer_code_events ORDER BY event") == [
                        "purchase_started", "shown",
                    ]
                )
                #expect(try await OfferCodeTests.ints(client, "SELECT count(*)::int FROM reclaim.offer_codes WHERE delivered_at IS NOT NULL") == [1])
            }
        }
    }

    /// A server that answers `GET /v1/offers` with `body` whatever is asked.
    static func serving(_ body: String, _ test: @Sendable (ReclaimClient) async throws -> Void) async throws {
        let router = Router()
        router.get("/v1/offers") { _, _ -> Response in
            Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: body)))
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { http in
            try await test(ReclaimClient(baseURL: URL(string: "http://127.0.0.1:\(try #require(http.port))")!, appKey: "k"))
        }
    }

    @Test("why codes are opt-in: 2.0's decoding fails the whole answer on a code element; 2.1 decodes it and skips a kind it does not know")
    func decoding() async throws {
        let offer = String(decoding: ReclaimClientPurchaseTests.answer(environment: "Sandbox", expiresAt: "2026-12-03T16:03:25Z"), as: UTF8.self)
        let element = try #require(offer.firstRange(of: "[{").map { offer[$0.upperBound...] }.map { "{" + $0.dropLast(2) })
        let code = """
            {"kind": "offerCode", "id": "c51d460e-0000-4000-8000-0000000c0de1", "campaign": "winback-codes", "environment": "Sandbox",
             "productIdentifier": "com.example.monthly", "offerIdentifier": "WINBACK-CODES", "offerCode": "ABCD1234",
             "redemptionUrl": "https://apps.apple.com/redeem?ctx=offercodes&id=1&code=ABCD1234", "expiresAt": "2026-12-03T16:03:25Z"}
            """
        let future = #"{"kind": "somethingNew", "id": "x"}"#
        let body =
            #"{"appAccountToken": "00000000-0000-0000-0000-000000000051", "offers": ["# + [element, code, future].joined(separator: ",") + "]}"
        try await Self.serving(body) { reclaim in
            await #expect(throws: ReclaimClientError.self, "a 2.0 client cannot read an answer with a code in it") {
                _ = try await reclaim.pendingOffers(appAccountToken: ReclaimClientTests.user)
            }
            let both = try await reclaim.pendingOffersAndCodes(appAccountToken: ReclaimClientTests.user)
            #expect(both.offers.map(\.offerIdentifier) == ["WINBACK30"] && both.codes.map(\.code) == ["ABCD1234"])
        }
    }
}
