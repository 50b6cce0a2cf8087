import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import ReclaimDomain
import ReclaimStore
import ReclaimTestSupport
import Synchronization
import Testing

@testable import ReclaimService

/// Issue 74: where Reclaim knows whose a purchase is and Apple's transaction does not say, Apple's Set App Account
/// Token is called (opt-in per app): once per subscription and token, never for a family-shared purchase, never over
/// a token Apple holds unless the app's user proved the purchase and the app corrects.
@Suite("Set App Account Token: a purchase made outside the app tied back to its user, once, paced, recorded", .poolWatchdog)
struct AppAccountTokenTests {
    let logger = TestPostgres.logger
    typealias Setup = RecoveryTests.Setup
    static let known = UUID(uuidString: "00000000-0000-0000-0000-000000000051")!
    static let user = UUID(uuidString: "6f1d2c3b-0000-4000-8000-0000000000a1")!

    static func config(_ setup: Setup, port: Int, mode: String) throws -> ReclaimConfig {
        let secret = setup.directory.appendingPathComponent("user.secret")
        try UserTokenTests.secret.write(to: secret, atomically: true, encoding: .utf8)
        let yaml = setup.yaml(port: port).replacingOccurrences(
            of: "    rootCertificates:",
            with: "    setAppAccountToken: \(mode)\n    userTokenSecretFile: \(secret.path)\n    rootCertificates:"
        )
        return try ReclaimConfig.parse(yaml: yaml)
    }

    /// A notification of subscription `id` whose transaction carries `token` (none: nil) and is `ownership`'s.
    static func notification(_ setup: Setup, _ id: String, type: String = "SUBSCRIBED", token: UUID?, ownership: String = "PURCHASED") throws -> Data
    {
        let purchased = Int64(Date().addingTimeInterval(-86_400).timeIntervalSince1970 * 1000)
        return try setup.notifications.body(
            type: type,
            subtype: nil,
            originalTransactionId: id,
            appAccountToken: token,
            transactionFields: [
                "purchaseDate": purchased, "originalPurchaseDate": purchased, "inAppOwnershipType": ownership,
                "expiresDate": Int64(Date().addingTimeInterval(20 * 86_400).timeIntervalSince1970 * 1000),
            ]
        )
    }

    static func updates(_ client: Database) async throws -> [String: String] {
        var found: [String: String] = [:]
        let rows = try await client.query(
            "SELECT original_transaction_id, source || ' ' || status FROM reclaim.app_account_token_updates",
            logger: TestPostgres.logger
        )
        for try await (id, state) in rows.decode((String, String).self) { found[id] = state }
        return found
    }

    @Test(
        "a code redeemed outside the app: the earlier transaction's token set once; family-shared never; a second notification sends nothing; the story shows it; Apple's model reads the body"
    )
    func earlierTransaction() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let standIn = setup.standIn()
        try await RecoveryTests().withStandIn(standIn) { port in
            try await withTestDatabase { client, _ in
                let dependencies = try Dependencies.test(postgres: client, config: try Self.config(setup, port: port, mode: "fill"))
                let expires = Int64(Date().addingTimeInterval(20 * 86_400).timeIntervalSince1970 * 1000)
                standIn.accounts.add("9400000000000001", expiresDate: expires)
                standIn.accounts.add("9400000000000002", expiresDate: expires, familyShared: true)
                try await processNotifications(
                    [
                        // Bought in the app (with its user's token), then a code redeemed in the App Store (none).
                        try Self.notification(setup, "9400000000000001", token: Self.known),
                        try Self.notification(setup, "9400000000000001", type: "OFFER_REDEEMED", token: nil),
                        // A family member's purchase: Apple refuses the call, so it is never made.
                        try Self.notification(setup, "9400000000000002", token: Self.known),
                        try Self.notification(setup, "9400000000000002", type: "DID_RENEW", token: nil, ownership: "FAMILY_SHARED"),
                        // Apple's transaction carries the token: nothing to set.
                        try Self.notification(setup, "9400000000000004", token: Self.known),
                        try Self.notification(setup, "9400000000000004", type: "DID_RENEW", token: Self.known),
                    ],
                    client: client,
                    dependencies: dependencies
                )
                #expect(try await Self.updates(client) == ["9400000000000001": "earlier-transaction set"])
                #expect(standIn.accounts.subscriptions.withLock { $0["9400000000000001"]?.appAccountToken } == Self.known.uuidString.lowercased())

                // Apple goes on sending token-less renewals: the same subscription and token is never sent again.
                try await processNotifications(
                    [try Self.notification(setup, "9400000000000001", type: "DID_RENEW", token: nil)],
                    client: client,
                    dependencies: dependencies
                )
                let bodies = standIn.accounts.bodies.withLock { $0.filter { $0.endpoint == "setAppAccountToken" } }
                #expect(bodies.count == 1, "\(bodies.count) calls")
                let read = try await RenewalExtensionClientTests.throughApplesModels([
                    ["UpdateAppAccountTokenRequest", try #require(bodies.first).body]
                ])
                #expect(read == [#"{"appAccountToken": "\#(Self.known.uuidString.lowercased())"}"#])

                let story = try await client.withConnection(logger: logger) { connection in
                    try await SubscriberStore.story(
                        SubscriberLookup(.originalTransactionId("9400000000000001")),
                        connection: connection,
                        logger: logger
                    )
                }
                let updates = try #require(story.subscriptions.first).appAccountTokenUpdates
                #expect(updates.map(\.status) == ["set"] && updates.first?.source == "earlier-transaction", "\(updates)")
            }
        }
    }

    @Test("stored before the app opted in: --dry-run counts, the run queues, a second run finds nothing; an app with it off is refused")
    func backlog() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let standIn = setup.standIn()
        try await RecoveryTests().withStandIn(standIn) { port in
            try await withTestDatabase { client, _ in
                let off = try Dependencies.test(postgres: client, config: try Self.config(setup, port: port, mode: "off"))
                try await processNotifications(
                    [
                        try Self.notification(setup, "9400000000000011", token: Self.known),
                        try Self.notification(setup, "9400000000000011", type: "OFFER_REDEEMED", token: nil),
                        try Self.notification(setup, "9400000000000012", token: Self.known),
                        try Self.notification(setup, "9400000000000012", type: "DID_RENEW", token: nil, ownership: "FAMILY_SHARED"),
                    ],
                    client: client,
                    dependencies: off
                )
                #expect(try await Self.updates(client).isEmpty, "the app had it off")
                await #expect(throws: AccountTokenBacklog.Refused.self) {
                    try await AccountTokenBacklog(dependencies: off, logger: logger).run(bundleId: "com.example.app", dryRun: true)
                }
                let fill = try Dependencies.test(postgres: client, config: try Self.config(setup, port: port, mode: "fill"))
                let backlog = AccountTokenBacklog(dependencies: fill, logger: logger)
                let preview = try await backlog.run(bundleId: "com.example.app", dryRun: true)
                #expect(preview == .init(toSet: 1, excluded: 1, unreadable: 0), "\(preview)")
                #expect(try await Self.updates(client).isEmpty, "a dry run queued something")
                #expect(try await backlog.run(bundleId: "com.example.app", dryRun: false).toSet == 1)
                #expect(try await Self.updates(client) == ["9400000000000011": "earlier-transaction pending"])
                #expect(try await backlog.run(bundleId: "com.example.app", dryRun: true).toSet == 0)
                // Consent withdrawn before the call goes: never sent.
                try await client.query(
                    "UPDATE reclaim.subscriptions SET consent_rescinded_at = now() WHERE original_transaction_id = '9400000000000011'",
                    logger: logger
                )
                try await processNotifications([], client: client, dependencies: fill)
                #expect(try await Self.updates(client) == ["9400000000000011": "earlier-transaction refused"])
                #expect(standIn.accounts.bodies.withLock { $0 }.isEmpty, "Apple was asked for a subscriber whose consent was withdrawn")
            }
        }
    }

    @Test(
        "the lookup with the app user's token: a token-less purchase is set to that user; in correct mode another token is replaced; without a valid user token 401"
    )
    func provenByLookup() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let standIn = setup.standIn()
        try await RecoveryTests().withStandIn(standIn) { port in
            try await withTestDatabase { client, _ in
                let dependencies = try Dependencies.test(postgres: client, config: try Self.config(setup, port: port, mode: "correct"))
                let appKey = try await TestKeys(client: client).create(scope: .app, bundleId: "com.example.app", logger: logger)
                @Sendable func transaction(_ id: String, token: UUID?) throws -> String {
                    var fields: [String: Any] = [
                        "originalTransactionId": id, "transactionId": id, "bundleId": "com.example.app", "productId": "com.example.monthly",
                        "environment": "Sandbox", "signedDate": Int64(Date().timeIntervalSince1970 * 1000), "type": "Auto-Renewable Subscription",
                        "inAppOwnershipType": "PURCHASED",
                    ]
                    if let token { fields["appAccountToken"] = token.uuidString.lowercased() }
                    return try setup.ca.sign(json: fields)
                }
                let app = Application(router: buildRouter(dependencies), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
                try await app.test(.router) { http in
                    func lookup(_ jws: String, user: String?, userToken: String?) async throws -> HTTPResponse.Status {
                        var headers: HTTPFields = [.contentType: "application/json", .authorization: "Bearer \(appKey)"]
                        if let userToken { headers[AppUserAuthenticator.userTokenHeader] = userToken }
                        let query = user.map { "?appAccountToken=\($0)" } ?? ""
                        let body = try JSONEncoder().encode(["signedTransaction": jws])
                        return try await http.execute(
                            uri: "/v1/offers/lookup\(query)",
                            method: .post,
                            headers: headers,
                            body: ByteBuffer(bytes: body)
                        ) {
                            $0.status
                        }
                    }
                    let user = Self.user.uuidString.lowercased()
                    let valid = try await UserTokenTests.token(for: user, expiresIn: 600)
                    let stranger = try await UserTokenTests.token(for: UUID().uuidString.lowercased(), expiresIn: 600)
                    // Naming a user without the backend's proof, or with another user's: refused, nothing queued.
                    #expect(try await lookup(try transaction("9400000000000021", token: nil), user: user, userToken: nil) == .unauthorized)
                    #expect(try await lookup(try transaction("9400000000000021", token: nil), user: user, userToken: stranger) == .unauthorized)
                    #expect(try await lookup(try transaction("9400000000000021", token: nil), user: "not-a-uuid", userToken: valid) == .badRequest)
                    // Without a user named, the lookup is as before and sets nothing.
                    #expect(try await lookup(try transaction("9400000000000021", token: nil), user: nil, userToken: nil) == .ok)
                    #expect(try await Self.updates(client).isEmpty)
                    // Proven: a token-less purchase, and (correct mode) one carrying another user's token.
                    #expect(try await lookup(try transaction("9400000000000021", token: nil), user: user, userToken: valid) == .ok)
                    #expect(try await lookup(try transaction("9400000000000022", token: Self.known), user: user, userToken: valid) == .ok)
                    // Already the user's: nothing.
                    #expect(try await lookup(try transaction("9400000000000023", token: Self.user), user: user, userToken: valid) == .ok)
                    // A subscriber forgotten on request: their device's lookup queues nothing for Apple.
                    _ = try await SubscriberErasure.forget(
                        SubscriberLookup(.originalTransactionId("9400000000000024")),
                        postgres: client,
                        logger: logger
                    )
                    #expect(try await lookup(try transaction("9400000000000024", token: nil), user: user, userToken: valid) == .ok)
                }
                #expect(try await Self.updates(client) == ["9400000000000021": "lookup pending", "9400000000000022": "lookup pending"])
                let replaced = try await client.query(
                    "SELECT replaces_token FROM reclaim.app_account_token_updates WHERE original_transaction_id = '9400000000000022'",
                    logger: logger
                )
                for try await token in replaced.decode(UUID?.self) { #expect(token == Self.known) }
            }
        }
    }

    @Test("a lookup proven while the subscriber's erasure is under way queues nothing for Apple (it queued their id and token)")
    func forgottenMeanwhile() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        try await withTestDatabase { client, _ in
            let repairs = AccountTokenRepairs(postgres: client, config: try Self.config(setup, port: 1, mode: "correct"))
            let otid = "9400000000000031"
            let purchase = TransactionInfo(originalTransactionId: otid, appAccountToken: nil, inAppOwnershipType: "PURCHASED")
            let subscriber = SubscriberKey(bundleId: "com.example.app", environment: "Sandbox", originalTransactionId: otid)
            try await whileForgetting(SubscriberLookup(.originalTransactionId(otid)), client: client) {
                try await repairs.proven(purchase, of: subscriber, user: Self.user, logger: TestPostgres.logger)
            }
            #expect(try await Self.updates(client).isEmpty)
        }
    }

    @Test("the rule: off never; fill only where Apple's purchase has none; correct replaces only from the lookup; never family-shared")
    func rule() {
        func transaction(_ token: UUID?, ownership: String = "PURCHASED") -> TransactionInfo {
            TransactionInfo(originalTransactionId: "1", appAccountToken: token?.uuidString.lowercased(), inAppOwnershipType: ownership)
        }
        let other = UUID()
        typealias Rule = AppAccountTokenRepair
        #expect(Rule.update(known: Self.known, transaction: transaction(nil), source: .earlierTransaction, mode: .off) == nil)
        #expect(Rule.update(known: Self.known, transaction: transaction(nil), source: .earlierTransaction, mode: .fill)?.token == Self.known)
        #expect(Rule.update(known: Self.known, transaction: transaction(nil, ownership: "FAMILY_SHARED"), source: .lookup, mode: .correct) == nil)
        #expect(Rule.update(known: Self.known, transaction: transaction(other), source: .lookup, mode: .fill) == nil)
        #expect(Rule.update(known: Self.known, transaction: transaction(other), source: .earlierTransaction, mode: .correct) == nil)
        #expect(Rule.update(known: Self.known, transaction: transaction(other), source: .lookup, mode: .correct)?.replaces == other)
        #expect(Rule.update(known: Self.known, transaction: transaction(Self.known), source: .lookup, mode: .correct) == nil)
        #expect(Rule.update(known: nil, transaction: transaction(nil), source: .earlierTransaction, mode: .fill) == nil)
    }
}
