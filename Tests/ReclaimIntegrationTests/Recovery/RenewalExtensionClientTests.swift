import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdTesting
import ReclaimTestSupport
import Synchronization
import Testing

@testable import ReclaimService

/// Issue 74's calls: Extend a Subscription Renewal Date, the mass extension and its status, Set App Account Token;
/// against a stand-in Apple that answers as Apple's documentation says, each body read by Apple's Python models.
@Suite("Make-goods and account repair through Apple: the client's four calls", .poolWatchdog)
struct RenewalExtensionClientTests {
    let logger = TestPostgres.logger
    typealias Setup = RecoveryTests.Setup

    /// A client of the stand-in (Sandbox) on a fresh database's pacer.
    func withClient(
        failures: [Int: AppleAPIStandIn.Failure] = [:],
        limits: [String: Int] = [:],
        _ body: @Sendable (AppStoreServerAPIClient, AppleAPIStandIn) async throws -> Void
    ) async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let standIn = setup.standIn(failures: failures, limits: limits)
        let app = Application(router: standIn.router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { http in
            let port = try #require(http.port)
            try await withTestDatabase { client, _ in
                let config = try setup.config(port: port)
                var apple = try AppStoreServerAPIClient(
                    app: try #require(config.apps.first),
                    environment: "Sandbox",
                    http: HTTPClient.shared,
                    pacer: AppleAPIPacer(database: client, logger: logger),
                    logger: logger
                )
                apple.retry.deadline = .seconds(20)
                try await body(apple, standIn)
            }
        }
    }

    static let day: Int64 = 86_400_000
    static var now: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    @Test("each body as Apple's Python models read it (and the same JSON back), each answer as they write it")
    func bodiesAndAnswers() async throws {
        try await withClient { apple, standIn in
            let expires = Self.now + 10 * Self.day
            standIn.accounts.add("1000", expiresDate: expires)
            let extended = try await apple.extendRenewalDate(
                originalTransactionId: "1000",
                .init(extendByDays: 7, extendReasonCode: .serviceIssueOrOutage, requestIdentifier: "grant-3f2a")
            )
            #expect(extended.success == true)
            #expect(extended.effectiveDate == expires + 7 * Self.day)
            #expect(extended.originalTransactionId == "1000")
            let mass = try await apple.extendRenewalDatesForAllActiveSubscribers(
                .init(
                    requestIdentifier: "outage-2026-11-28",
                    extendByDays: 3,
                    extendReasonCode: .serviceIssueOrOutage,
                    productId: "com.example.monthly",
                    storefrontCountryCodes: ["USA", "FRA"]
                )
            )
            #expect(mass.requestIdentifier == "outage-2026-11-28")
            let pending = try await apple.renewalExtensionStatus(productId: "com.example.monthly", requestIdentifier: "outage-2026-11-28")
            #expect(pending.complete == false)
            let done = try await apple.renewalExtensionStatus(productId: "com.example.monthly", requestIdentifier: "outage-2026-11-28")
            #expect(done.complete == true && done.succeededCount == 30 && done.failedCount == 2)
            let token = UUID()
            try await apple.setAppAccountToken(originalTransactionId: "1000", token)
            #expect(standIn.accounts.subscriptions.withLock { $0["1000"]?.appAccountToken } == token.uuidString.lowercased())

            // Apple's library reads each body Reclaim sent, and writes it back the same.
            let sent = standIn.accounts.bodies.withLock { $0 }
            #expect(sent.map(\.endpoint) == ["extendSubscriptionRenewalDate", "extendRenewalDatesForAllActiveSubscribers", "setAppAccountToken"])
            let models = ["ExtendRenewalDateRequest", "MassExtendRenewalDateRequest", "UpdateAppAccountTokenRequest"]
            let checked = try await Self.throughApplesModels(zip(models, sent.map(\.body)).map { [$0, $1] })
            #expect(checked.count == 3)
            for (model, (body, back)) in zip(models, zip(sent.map(\.body), checked)) {
                #expect(try Self.object(body) == Self.object(back), "\(model): sent \(body), Apple's library wrote \(back)")
            }
            #expect(try Self.object(sent[0].body) == (["extendByDays": 7, "extendReasonCode": 3, "requestIdentifier": "grant-3f2a"] as NSDictionary))

            // And Reclaim reads each answer as Apple's library writes it.
            let answers = try await Self.throughApplesModels([
                [
                    "ExtendRenewalDateResponse",
                    #"{"originalTransactionId":"1000","webOrderLineItemId":"wo-1","success":true,"effectiveDate":1800000000000}"#,
                ],
                ["MassExtendRenewalDateResponse", #"{"requestIdentifier":"outage-2026-11-28"}"#],
                [
                    "MassExtendRenewalDateStatusResponse",
                    #"{"requestIdentifier":"r","complete":true,"completeDate":1800000000000,"succeededCount":30,"failedCount":2}"#,
                ],
            ])
            let decoder = JSONDecoder()
            let single = try decoder.decode(AppStoreAPI.ExtendRenewalDateResponse.self, from: Data(answers[0].utf8))
            #expect(single == .init(originalTransactionId: "1000", webOrderLineItemId: "wo-1", success: true, effectiveDate: 1_800_000_000_000))
            #expect(
                try decoder.decode(AppStoreAPI.MassExtendRenewalDateResponse.self, from: Data(answers[1].utf8)).requestIdentifier
                    == "outage-2026-11-28"
            )
            let status = try decoder.decode(AppStoreAPI.MassExtendRenewalDateStatusResponse.self, from: Data(answers[2].utf8))
            #expect(status == .init(requestIdentifier: "r", complete: true, completeDate: 1_800_000_000_000, succeededCount: 30, failedCount: 2))
        }
    }

    @Test("Apple's refusals come back named in Apple's words, sent once: ineligible, the yearly limit, Family Sharing, not an original id")
    func refusals() async throws {
        try await withClient { apple, standIn in
            let expires = Self.now + 10 * Self.day
            standIn.accounts.add("lapsed", expiresDate: Self.now - Self.day)
            standIn.accounts.add("retrying", expiresDate: expires, ineligible: true)
            standIn.accounts.add("shared", expiresDate: expires, familyShared: true)
            standIn.accounts.add("twice", expiresDate: expires)
            standIn.accounts.renewalTransactionIds.withLock { _ = $0.insert("renewal-2") }
            func refusal(_ id: String, request: String) async -> AppStoreAPIError? {
                do {
                    _ = try await apple.extendRenewalDate(
                        originalTransactionId: id,
                        .init(extendByDays: 5, extendReasonCode: .customerSatisfaction, requestIdentifier: request)
                    )
                    return nil
                } catch { return error as? AppStoreAPIError }
            }
            let before = standIn.received.count
            #expect(await refusal("lapsed", request: "a")?.description.contains("403 (Apple: 4030004 SubscriptionExtensionIneligibleError") == true)
            #expect(await refusal("retrying", request: "b")?.description.contains("4030004 SubscriptionExtensionIneligibleError") == true)
            #expect(await refusal("shared", request: "c")?.description.contains("4030007 FamilySharedSubscriptionExtensionIneligibleError") == true)
            #expect(await refusal("twice", request: "d") == nil)
            #expect(await refusal("twice", request: "e") == nil)
            // The same requestIdentifier again is the first request's answer, not a third extension.
            #expect(await refusal("twice", request: "e") == nil)
            #expect(await refusal("twice", request: "f")?.description.contains("4030005 SubscriptionMaxExtensionError") == true)
            #expect(standIn.received.count - before == 7, "a refusal was sent again")
            #expect(standIn.accounts.subscriptions.withLock { $0["twice"]?.expiresDate } == expires + 10 * Self.day)

            await #expect(throws: AppStoreAPIError.self) { try await apple.setAppAccountToken(originalTransactionId: "renewal-2", UUID()) }
            do {
                try await apple.setAppAccountToken(originalTransactionId: "shared", UUID())
                Issue.record("Apple's refusal of a family-shared purchase was not reported")
            } catch let error as AppStoreAPIError {
                #expect(error.errorCode == 4_000_185 && error.description.contains("FamilyTransactionNotSupportedError"), "\(error)")
            }
        }
    }

    @Test("a 429 waits for Apple's Retry-After and goes through; a 401 fails at once, sent once")
    func rateLimitAndUnauthorized() async throws {
        try await withClient(failures: [1: .rateLimited(retryAfter: .seconds(1)), 3: .unauthorized]) { apple, standIn in
            standIn.accounts.add("1000", expiresDate: Self.now + 10 * Self.day)
            let started = ContinuousClock.now
            let answer = try await apple.extendRenewalDate(
                originalTransactionId: "1000",
                .init(extendByDays: 1, extendReasonCode: .other, requestIdentifier: "paced")
            )
            #expect(answer.success == true)
            #expect(ContinuousClock.now - started >= .milliseconds(900), "sent again before Apple's Retry-After")
            await #expect(throws: AppStoreAPIError.self) { try await apple.setAppAccountToken(originalTransactionId: "1000", UUID()) }
            #expect(standIn.received.count == 3)
        }
    }

    @Test("extensions are paced at Apple's limit for the endpoint: Sandbox's 2 a second is never exceeded")
    func pacedAtTheEndpointsLimit() async throws {
        // The stand-in answers 429 past 2 a second, as Apple's Sandbox would (10% of Production's 20).
        try await withClient(limits: ["extendSubscriptionRenewalDate": 2]) { apple, standIn in
            for index in 0..<5 { standIn.accounts.add("s\(index)", expiresDate: Self.now + 10 * Self.day) }
            for index in 0..<5 {
                _ = try await apple.extendRenewalDate(
                    originalTransactionId: "s\(index)",
                    .init(extendByDays: 2, extendReasonCode: .serviceIssueOrOutage, requestIdentifier: "outage-\(index)")
                )
            }
            #expect(standIn.received.allSatisfy { !$0.limited }, "Apple's limit refused one")
            #expect(standIn.busiestSecond("/inApps/v1/subscriptions/extend/") <= 2)
        }
        #expect(AppleEndpoint.extendSubscriptionRenewalDate.appleRate(in: "Production") == 20)
        #expect(AppleEndpoint.setAppAccountToken.appleRate(in: "Sandbox") == 2)
        #expect(AppleEndpoint.extendRenewalDatesForAllActiveSubscribers.appleRate(in: "Production") == 1)
        #expect(AppleEndpoint.getStatusOfSubscriptionRenewalDateExtensions.appleRate(in: "Production") == 1)
    }

    @Test("a body Apple would refuse is refused before it is sent, in Apple's terms")
    func refusedBeforeSending() throws {
        typealias Invalid = AppStoreAPI.InvalidRequest
        #expect(throws: Invalid.self) { try AppStoreAPI.ExtendRenewalDateRequest(extendByDays: 0, extendReasonCode: .other, requestIdentifier: "a") }
        #expect(throws: Invalid.self) { try AppStoreAPI.ExtendRenewalDateRequest(extendByDays: 91, extendReasonCode: .other, requestIdentifier: "a") }
        #expect(throws: Invalid.self) {
            try AppStoreAPI.ExtendRenewalDateRequest(
                extendByDays: 90,
                extendReasonCode: .other,
                requestIdentifier: String(repeating: "x", count: 129)
            )
        }
        #expect(throws: Invalid.self) { try AppStoreAPI.ExtendRenewalDateRequest(extendByDays: 1, extendReasonCode: .other, requestIdentifier: "") }
        _ = try AppStoreAPI.ExtendRenewalDateRequest(
            extendByDays: 90,
            extendReasonCode: .undeclared,
            requestIdentifier: String(repeating: "x", count: 128)
        )
        #expect(throws: Invalid.self) {
            try AppStoreAPI.MassExtendRenewalDateRequest(
                requestIdentifier: "r",
                extendByDays: 1,
                extendReasonCode: .other,
                productId: "p",
                storefrontCountryCodes: []
            )
        }
        #expect(throws: Invalid.self) {
            try AppStoreAPI.MassExtendRenewalDateRequest(
                requestIdentifier: "r",
                extendByDays: 1,
                extendReasonCode: .other,
                productId: "p",
                storefrontCountryCodes: ["usa"]
            )
        }
        #expect(throws: Invalid.self) {
            try AppStoreAPI.MassExtendRenewalDateRequest(requestIdentifier: "r", extendByDays: 1, extendReasonCode: .other, productId: "")
        }
        // Identifiers in the path stay one segment: a slash or a question mark cannot add a segment or a query.
        #expect(AppStoreServerAPIClient.pathSegment("a/b?c=d#e") == "a%2Fb%3Fc=d%23e")
        #expect(AppStoreServerAPIClient.pathSegment("com.example.monthly_1-x") == "com.example.monthly_1-x")
        let body = try JSONEncoder().encode(
            AppStoreAPI.UpdateAppAccountTokenRequest(appAccountToken: UUID(uuidString: "7E3FB20B-4CDB-47CC-936D-99D65F608138")!)
        )
        #expect(String(decoding: body, as: UTF8.self) == #"{"appAccountToken":"7e3fb20b-4cdb-47cc-936d-99d65f608138"}"#)
    }

    /// Each `[model, JSON]` through app-store-server-library's model of that name (cattrs, as the library reads and
    /// writes it): the JSON it writes back, in order.
    static func throughApplesModels(_ pairs: [[String]]) async throws -> [String] {
        let script = #"""
            import importlib, json, sys
            from appstoreserverlibrary.models.LibraryUtility import _get_cattrs_converter
            out = []
            for name, text in json.load(sys.stdin):
                model = getattr(importlib.import_module("appstoreserverlibrary.models." + name), name)
                converter = _get_cattrs_converter(model)
                value = converter.structure(json.loads(text), model)
                out.append(json.dumps(converter.unstructure(value)))
            print(json.dumps(out))
            """#
        let run = try await Subprocess.run("/usr/bin/env", ["python3", "-c", script], input: try JSONSerialization.data(withJSONObject: pairs))
        guard run.status == 0, let out = try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String] else {
            throw PythonCrossCheck.Failure(description: "\(run.output)\(run.errors)")
        }
        return out
    }

    static func object(_ text: String) throws -> NSDictionary {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? NSDictionary)
    }
}
