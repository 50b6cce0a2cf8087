import AsyncHTTPClient
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

/// Issue 74: an outage make-good for every active subscriber of a product (`reclaim extensions all`): Apple asked
/// once per product, the status polled until complete, the summary notification matched, and the RENEWAL_EXTENDED
/// notifications that follow update state without firing a campaign.
@Suite("Mass extensions: Apple's renewal-date extension for all active subscribers, polled, summarized, no campaign burst", .poolWatchdog)
struct MassExtensionTests {
    let logger = TestPostgres.logger
    typealias Setup = RecoveryTests.Setup
    static let day: TimeInterval = 86_400

    /// The recovery config with a campaign that fires on RENEWAL_EXTENDED: what a mass extension must not set off.
    static func config(_ setup: Setup, port: Int) throws -> ReclaimConfig {
        try ReclaimConfig.parse(
            yaml: setup.yaml(port: port) + """

                  - id: thanks-for-waiting
                    app: com.example.app
                    trigger: RENEWAL_EXTENDED
                    offer: {productId: com.example.monthly, offerIdentifier: THANKS}
                    cooldown: 90d
                """
        )
    }

    static func extended(_ setup: Setup, _ id: String) throws -> Data {
        try RefundRequestTests.notification(
            setup,
            type: "RENEWAL_EXTENDED",
            id: id,
            transaction: ["expiresDate": Int64(Date().addingTimeInterval(40 * day).timeIntervalSince1970 * 1000), "inAppOwnershipType": "PURCHASED"]
        )
    }

    static func decisions(_ client: Database, _ id: String) async throws -> Int {
        let rows = try await client.query(
            "SELECT count(*)::int FROM reclaim.campaign_decisions WHERE campaign_id = 'thanks-for-waiting' AND original_transaction_id = \(id)",
            logger: TestPostgres.logger
        )
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }

    @Test(
        "asked once, polled to completion with the RENEWAL_EXTENDED count as progress; those notifications update state and fire nothing; the summary is matched; every body Apple's model"
    )
    func outageMakeGood() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let standIn = setup.standIn()
        try await RecoveryTests().withStandIn(standIn) { port in
            try await withTestDatabase { client, _ in
                let dependencies = try Dependencies.test(postgres: client, config: try Self.config(setup, port: port))
                // Before any mass extension, a RENEWAL_EXTENDED (one subscriber's make-good) is a campaign's trigger
                // as before: the campaign is live, so its silence below is the mass extension's doing.
                try await processNotifications([try Self.extended(setup, "9300000000000009")], client: client, dependencies: dependencies)
                #expect(try await Self.decisions(client, "9300000000000009") == 1)

                let extensions = MassExtensions(dependencies: dependencies, http: HTTPClient.shared, pollEvery: .milliseconds(100), logger: logger)
                let request = MassExtensions.Request(
                    bundleId: "com.example.app",
                    environment: "Sandbox",
                    productIds: ["com.example.monthly"],
                    extendByDays: 5,
                    extendReasonCode: 3,
                    storefrontCountryCodes: ["USA", "CAN"],
                    reason: "the outage of 2026-11-20",
                    actor: "on-call"
                )
                let asked = try await extensions.run(request, wait: false) { _ in }
                guard case .accepted(let accepted) = try #require(asked.first) else {
                    Issue.record("not accepted: \(asked)")
                    return
                }
                let id = accepted.requestIdentifier

                // Apple extends each subscriber and says so; Reclaim records their new dates, and no campaign fires.
                try await processNotifications(
                    [try Self.extended(setup, "9300000000000001"), try Self.extended(setup, "9300000000000002")],
                    client: client,
                    dependencies: dependencies
                )
                for subscriber in ["9300000000000001", "9300000000000002"] {
                    #expect(try await Self.decisions(client, subscriber) == 0, "a campaign fired for \(subscriber)")
                    let rows = try await client.query(
                        "SELECT expires_at FROM reclaim.subscriptions WHERE original_transaction_id = \(subscriber)",
                        logger: logger
                    )
                    var expires: Date?
                    for try await date in rows.decode(Date.self) { expires = date }
                    #expect(try #require(expires).timeIntervalSinceNow > 39 * Self.day, "state not updated for \(subscriber)")
                }

                // Run again with the request id (after a Ctrl-C): Apple is not asked again; polled until complete.
                let seen = Mutex<[MassExtensions.Progress]>([])
                var resumed = request
                resumed.requestIdentifier = id
                let done = try await extensions.run(resumed, wait: true) { progress in seen.withLock { $0.append(progress) } }
                guard case .complete(let complete) = try #require(done.first) else {
                    Issue.record("not complete: \(done)")
                    return
                }
                #expect(complete.succeededCount == 30 && complete.failedCount == 2, "\(complete)")
                let progress = seen.withLock { $0 }
                #expect(progress.count == 2 && progress.first?.done == false && progress.last?.done == true, "\(progress)")
                #expect(progress.last?.request.extendedNotifications == 2, "\(progress)")
                let massBodies = standIn.accounts.bodies.withLock { $0.filter { $0.endpoint == "extendRenewalDatesForAllActiveSubscribers" } }
                #expect(massBodies.count == 1, "Apple asked \(massBodies.count) times")

                // The same id with another request is refused before Apple is asked.
                var changed = resumed
                changed.extendByDays = 6
                await #expect(throws: MassExtensions.Refused.self) { try await extensions.run(changed, wait: false) { _ in } }
                var two = resumed
                two.productIds = ["com.example.monthly", "com.example.annual"]
                await #expect(throws: MassExtensions.Refused.self) { try await extensions.run(two, wait: false) { _ in } }

                // Apple's summary names the request; it is matched and its counts stored.
                let summaryUUID = UUID()
                let summaryPayload: [String: Any] = [
                    "notificationType": "RENEWAL_EXTENSION", "subtype": "SUMMARY", "notificationUUID": summaryUUID.uuidString.lowercased(),
                    "version": "2.0", "signedDate": Int64(Date().timeIntervalSince1970 * 1000),
                    "summary": [
                        "environment": "Sandbox", "appAppleId": 1_234_567_890, "bundleId": "com.example.app", "productId": "com.example.monthly",
                        "requestIdentifier": id, "storefrontCountryCodes": ["USA", "CAN"], "succeededCount": 30, "failedCount": 2,
                    ] as [String: Any],
                ]
                let signed = try setup.ca.sign(json: summaryPayload)
                try await processNotifications(
                    [try JSONSerialization.data(withJSONObject: ["signedPayload": signed])],
                    client: client,
                    dependencies: dependencies
                )
                let stored = try #require(
                    try await MassExtensionStore.find(
                        bundleId: "com.example.app",
                        environment: "Sandbox",
                        requestIdentifier: id,
                        database: client,
                        logger: logger
                    )
                )
                #expect(stored.summaryNotificationUUID == summaryUUID, "\(stored)")
                // A kind of its own in the views: days given, by outcome.
                let view = try await client.query(
                    "SELECT status, requests::int, subscribers_extended::int, days_given::int FROM reclaim.make_goods_daily WHERE kind = 'mass_extension'",
                    logger: logger
                )
                var rows: [String] = []
                for try await (status, requests, subscribers, days) in view.decode((String, Int, Int, Int).self) {
                    rows.append("\(status) \(requests) \(subscribers) \(days)")
                }
                #expect(rows == ["complete 1 30 150"])

                // What Apple was sent, and what Apple sends, read by Apple's Python models.
                let summaryText = String(decoding: try JSONSerialization.data(withJSONObject: summaryPayload), as: UTF8.self)
                let read = try await RenewalExtensionClientTests.throughApplesModels([
                    ["MassExtendRenewalDateRequest", massBodies[0].body], ["ResponseBodyV2DecodedPayload", summaryText],
                ])
                let body = try #require(JSONSerialization.jsonObject(with: Data(read[0].utf8)) as? [String: Any])
                #expect(body["productId"] as? String == "com.example.monthly" && body["extendByDays"] as? Int == 5, "\(read[0])")
                #expect(body["extendReasonCode"] as? Int == 3 && body["requestIdentifier"] as? String == id, "\(read[0])")
                #expect(body["storefrontCountryCodes"] as? [String] == ["USA", "CAN"], "\(read[0])")
                let payload = try #require(JSONSerialization.jsonObject(with: Data(read[1].utf8)) as? [String: Any])
                #expect((payload["summary"] as? [String: Any])?["requestIdentifier"] as? String == id, "\(read[1])")
            }
        }
    }
}
