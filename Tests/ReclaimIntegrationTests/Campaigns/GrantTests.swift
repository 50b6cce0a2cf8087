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

@Suite("POST /v1/grants over a real socket", .poolWatchdog)
struct GrantTests {
    let logger = TestPostgres.logger

    /// Posts a grant; the status and the decoded JSON answer.
    static func grant(
        _ body: [String: String],
        key: String?,
        idempotencyKey: String?,
        http: some TestClientProtocol
    ) async throws -> (HTTPResponse.Status, [String: Any]) {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let key { headers[.authorization] = "Bearer \(key)" }
        if let idempotencyKey { headers[.init("Idempotency-Key")!] = idempotencyKey }
        return try await http.execute(
            uri: "/v1/grants",
            method: .post,
            headers: headers,
            body: ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: body))
        ) { response in
            (response.status, (try? JSONSerialization.jsonObject(with: Data(String(buffer: response.body).utf8)) as? [String: Any]) ?? [:])
        }
    }

    static let referral = [
        "bundleId": "GeniusParentingAI", "appAccountToken": "00000000-0000-0000-0000-000000000051",
        "productId": "ca.geniusparentingai.basic.monthly", "offerIdentifier": "REFER100", "reason": "referred a friend",
        "campaign": "referral-2026",
    ]

    @Test("a grant after the subscriber's offer lapsed (before the expiry sweep) is created; NUL in any field is 400 naming it")
    func grantAfterLapseAndNUL() async throws {
        let setup = try CampaignTestSetup()
        defer { setup.remove() }
        try await withProcessedCorpus(setup) { client, dependencies in
            let adminKey = try await TestKeys(client: client).create(scope: .admin, bundleId: nil, logger: logger)
            let app = Application(router: buildRouter(dependencies), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.live) { http in
                var short = Self.referral
                short["deliverableFor"] = "1s"
                let first = try await Self.grant(short, key: adminKey, idempotencyKey: "lapse-1", http: http)
                #expect(first.0 == .created, "\(first)")
                try await Task.sleep(for: .seconds(2))
                // Lapsed, but still 'ready' until the refresher's sweep: it held offers_one_live_idx, and this was a 503.
                let second = try await Self.grant(Self.referral, key: adminKey, idempotencyKey: "lapse-2", http: http)
                #expect(second.0 == .created, "\(second)")
                for field in ["reason", "productId", "campaign", "offerIdentifier", "bundleId"] {
                    var body = Self.referral
                    body[field] = "a\u{0}b"
                    let answer = try await Self.grant(body, key: adminKey, idempotencyKey: "nul-\(field)", http: http)
                    #expect(answer.0 == .badRequest, "\(field): \(answer)")
                    #expect(answer.1["type"] as? String == "urn:reclaim:problem:invalid-text", "\(field): \(answer)")
                    #expect((answer.1["detail"] as? String)?.hasPrefix("\(field) holds the character U+0000") == true, "\(answer)")
                }
            }
            let ended = try await OfferRow.all(client).filter { $0.campaignId == "referral-2026" }
            #expect(ended.map(\.state).sorted() == ["expired", "ready"], "\(ended.map(\.state))")
        }
    }

    @Test(
        "admin key and Idempotency-Key required; eligibility refused with a reason; the same key returns the first result; the grant replaces the live offer and is delivered"
    )
    func grants() async throws {
        let setup = try CampaignTestSetup()
        defer { setup.remove() }
        try await withProcessedCorpus(setup) { client, dependencies in
            let keys = TestKeys(client: client)
            let adminKey = try await keys.create(scope: .admin, bundleId: nil, logger: logger)
            let appKey = try await keys.create(scope: .app, bundleId: "GeniusParentingAI", logger: logger)
            let app = Application(router: buildRouter(dependencies), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.live) { http in
                func grant(_ body: [String: String], key: String?, idempotencyKey: String?) async throws -> (HTTPResponse.Status, [String: Any]) {
                    try await Self.grant(body, key: key, idempotencyKey: idempotencyKey, http: http)
                }
                let referral = Self.referral
                #expect(try await grant(referral, key: nil, idempotencyKey: "k1").0 == .unauthorized)
                #expect(try await grant(referral, key: appKey, idempotencyKey: "k1").0 == .unauthorized)
                let missingKey = try await grant(referral, key: adminKey, idempotencyKey: nil)
                #expect(missingKey.0 == .badRequest && missingKey.1["type"] as? String == "urn:reclaim:problem:missing-idempotency-key")
                var stranger = referral
                stranger["appAccountToken"] = UUID().uuidString
                let refused = try await grant(stranger, key: adminKey, idempotencyKey: "k0")
                #expect(refused.0 == .unprocessableContent && refused.1["type"] as? String == "urn:reclaim:problem:not-eligible", "\(refused)")
                #expect((refused.1["detail"] as? String)?.contains("have or had") == true)
                var incomplete = referral
                incomplete["productId"] = ""
                #expect(try await grant(incomplete, key: adminKey, idempotencyKey: "k2").0 == .badRequest)

                let created = try await grant(referral, key: adminKey, idempotencyKey: "k1")
                #expect(created.0 == .created, "\(created)")
                let offer = try #require(created.1["offer"] as? [String: Any])
                #expect(offer["originalTransactionId"] as? String == "2000000970472825")
                let again = try await grant(referral, key: adminKey, idempotencyKey: "k1")
                #expect(again.0 == .ok)
                #expect((again.1["grant"] as? [String: Any])?["id"] as? String == (created.1["grant"] as? [String: Any])?["id"] as? String)
                #expect((again.1["offer"] as? [String: Any])?["id"] as? String == offer["id"] as? String)
                var changed = referral
                changed["reason"] = "something else"
                let reused = try await grant(changed, key: adminKey, idempotencyKey: "k1")
                #expect(reused.0 == .unprocessableContent && reused.1["type"] as? String == "urn:reclaim:problem:idempotency-key-reused")
                // The whole normalized request counts (issue 26): a different window or environment, or none where one was
                // given, is another grant; the default written out, or in another unit, is the same one.
                var windowed = referral
                windowed["deliverableFor"] = "14d"
                #expect(try await grant(windowed, key: adminKey, idempotencyKey: "k3").0 == .created)
                for (change, value) in [("deliverableFor", "7d"), ("deliverableFor", nil), ("environment", "Sandbox")] as [(String, String?)] {
                    var other = windowed
                    other[change] = value
                    let answer = try await grant(other, key: adminKey, idempotencyKey: "k3")
                    #expect(
                        answer.0 == .unprocessableContent && answer.1["type"] as? String == "urn:reclaim:problem:idempotency-key-reused",
                        "\(change) = \(value ?? "absent"): \(answer)"
                    )
                }
                var sameWindow = windowed
                sameWindow["deliverableFor"] = "2w"
                #expect(try await grant(sameWindow, key: adminKey, idempotencyKey: "k3").0 == .ok, "2w is 14d")
                var explicitDefault = referral
                explicitDefault["deliverableFor"] = "7d"
                #expect(try await grant(explicitDefault, key: adminKey, idempotencyKey: "k1").0 == .ok, "7d is the default")

                // The app sees the grant, and only it: the win-back offer it replaced is withdrawn.
                let delivered = try await http.execute(
                    uri: "/v1/offers?appAccountToken=00000000-0000-0000-0000-000000000051",
                    method: .get,
                    headers: [.authorization: "Bearer \(appKey)"]
                ) { try JSONSerialization.jsonObject(with: Data(String(buffer: $0.body).utf8)) as? [String: Any] }
                let offers = try #require(delivered?["offers"] as? [[String: Any]])
                #expect(offers.count == 1)
                #expect(offers.first?["campaign"] as? String == "referral-2026")
                #expect(offers.first?["offerIdentifier"] as? String == "REFER100")
            }
            let withdrawn = try await OfferRow.all(client).filter {
                $0.campaignId == "winback-expired" && $0.endReason?.hasPrefix("superseded by grant") == true
            }
            #expect(withdrawn.count == 1, "the second grant supersedes the first, not the campaign offer again")
            let rows = try await client.query("SELECT count(*)::bigint FROM reclaim.grants", logger: logger)
            for try await count in rows.decode(Int64.self) { #expect(count == 2) }
        }
    }
}
