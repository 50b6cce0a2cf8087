import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ReclaimDev
import ReclaimDomain
import Synchronization

/// A stand-in for Apple's App Store Server API on loopback: it checks the bearer token as Apple does (ES256
/// over the configured key, header kid/typ, claims iss/aud/bid/iat/exp with exp at most 60 minutes after iat)
/// and serves notification history in pages of 20, subscription statuses and test notifications. Tests script
/// failures by request number: a cut connection, 429 with Retry-After in UNIX milliseconds, 401. With `limits`, it
/// enforces Apple's rate limit per endpoint as Apple answers it (``AppleRateWindow``: 429, `RateLimitExceededError`,
/// `Retry-After`), and with `latency` it answers that much later.
final class AppleAPIStandIn: Sendable {
    enum Failure: Sendable {
        /// Sends the answer's first bytes, then closes the connection.
        case cutMidAnswer
        /// 429 with error 4290000 and `Retry-After` this far in the future (as Apple does: UNIX milliseconds).
        case rateLimited(retryAfter: Duration)
        case unauthorized
        case serverError
        /// 400 with an error no retry cures.
        case badRequest
    }

    struct Received: Sendable {
        let method: String
        let path: String
        let at: ContinuousClock.Instant
        /// Whether the rate limit refused it (429).
        let limited: Bool
    }

    let keyId: String
    let issuerId: String
    let bundleId: String
    let publicKey: P256.Signing.PublicKey
    /// Signed notification payloads with their signedDate, served by Get Notification History.
    let history: Mutex<[(signedPayload: String, signedDate: Int64)]> = Mutex([])
    /// Get All Subscription Statuses answers by transaction id.
    let statuses: Mutex<[String: AppStoreStatusFixture]> = Mutex([:])
    /// The test notification's signed payload, reported after `testPollsBeforeAttempt` polls.
    let testNotification: Mutex<(signedPayload: String, result: String)?> = Mutex(nil)
    let testPollsBeforeAttempt = 1
    /// Retention Messaging's messages by identifier, with their state (Get Message List).
    let messages: Mutex<[String: String]> = Mutex([:])
    /// Send Consumption Information bodies accepted (202), by transaction id, in order; and the product type of each
    /// transaction Apple knows (auto-renewable unless given), for the consumption-percentage rules.
    let consumptionAnswers: Mutex<[(transactionId: String, body: String)]> = Mutex([])
    /// Send Consumption Information's failures by transaction id: attempts answered 500 before one is accepted.
    let consumptionFailures: Mutex<[String: Int]> = Mutex([:])
    /// While true, Send Consumption Information answers nothing (an Apple that takes its time); each request waits.
    let consumptionHeld: Mutex<Bool> = Mutex(false)
    /// Retention Messaging set-up: uploaded message bodies, images' states, default messages ("product locale" to a
    /// message id), the realtime URL, and performance tests by request id (polls left before the result).
    let messageBodies: Mutex<[String: String]> = Mutex([:])
    let images: Mutex<[String: String]> = Mutex([:])
    let defaults: Mutex<[String: String]> = Mutex([:])
    let realtimeURL: Mutex<String?> = Mutex(nil)
    let performanceTests: Mutex<[String: Int]> = Mutex([:])
    /// Message ids whose next upload Apple keeps but whose answer is lost.
    let loseUploadAnswers: Mutex<Set<String>> = Mutex([])
    /// Message ids Apple holds (an upload answers 409) that its list does not show yet: uploaded by someone else
    /// after Reclaim read the list.
    let unlistedMessages: Mutex<Set<String>> = Mutex([])
    /// The state an uploaded message or image starts in: PENDING as in Production, APPROVED as in Sandbox.
    let reviewState: Mutex<String> = Mutex("PENDING")
    let productTypes: Mutex<[String: String]> = Mutex([:])
    /// Renewal-date extensions and app account tokens (AppleAPIStandIn+RenewalExtension.swift).
    let accounts = StandInAccounts()
    /// Apple's limit per endpoint identifier (getAllSubscriptionStatuses, getNotificationHistory, …).
    let limits: [String: AppleRateWindow]
    let latency: Duration
    private let failures: Mutex<[Int: Failure]>
    private let requests = Mutex<[Received]>([])
    private let tokenProblems = Mutex<[String]>([])

    init(
        keyId: String,
        issuerId: String,
        bundleId: String,
        publicKey: P256.Signing.PublicKey,
        failures: [Int: Failure] = [:],
        limits: [String: Int] = [:],
        latency: Duration = .zero
    ) {
        self.keyId = keyId
        self.issuerId = issuerId
        self.bundleId = bundleId
        self.publicKey = publicKey
        self.failures = Mutex(failures)
        self.limits = limits.mapValues { AppleRateWindow(perSecond: $0) }
        self.latency = latency
    }

    /// The most requests the limit admitted to `path`'s prefix in any one second (a window starting at each).
    func busiestSecond(_ prefix: String) -> Int {
        let times = received.filter { $0.path.hasPrefix(prefix) && !$0.limited }.map(\.at).sorted()
        var busiest = 0
        var first = 0
        for (index, time) in times.enumerated() {
            while time - times[first] >= .seconds(1) { first += 1 }
            busiest = max(busiest, index - first + 1)
        }
        return busiest
    }

    var received: [Received] { requests.withLock { $0 } }
    var refusedTokens: [String] { tokenProblems.withLock { $0 } }

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.post("/inApps/v1/notifications/history") { request, context in
            try await self.answer(request, context, endpoint: "getNotificationHistory") { body in try self.historyPage(request: request, body: body) }
        }
        router.get("/inApps/v1/subscriptions/:id") { request, context in
            try await self.answer(request, context, endpoint: "getAllSubscriptionStatuses") { _ in
                let id = context.parameters.get("id") ?? ""
                guard let fixture = self.statuses.withLock({ $0[id] }) else {
                    return (.notFound, #"{"errorCode":4040010,"errorMessage":"Transaction id not found."}"#)
                }
                return (.ok, try fixture.json())
            }
        }
        router.put("/inApps/v2/transactions/consumption/:id") { request, context in
            while self.consumptionHeld.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
            return try await self.answer(request, context, endpoint: "sendConsumptionInformation") { body in
                let id = context.parameters.get("id") ?? ""
                let fails = self.consumptionFailures.withLock { failures -> Bool in
                    guard let left = failures[id], left > 0 else { return false }
                    failures[id] = left - 1
                    return true
                }
                if fails { return (.internalServerError, #"{"errorCode":5000000,"errorMessage":"An unknown error occurred."}"#) }
                if let refusal = self.consumptionRefusal(body, transactionId: id) { return (.badRequest, refusal) }
                let text = String(decoding: body, as: UTF8.self)
                self.consumptionAnswers.withLock { $0.append((id, text)) }
                return (.accepted, "")
            }
        }
        router.put("/inApps/v1/messaging/message/:id") { request, context in
            let response = try await self.answer(request, context, endpoint: "uploadMessage") { body in
                let id = (context.parameters.get("id") ?? "").lowercased()
                guard UUID(uuidString: id) != nil else { return (.badRequest, #"{"errorMessage":"message identifier not a UUID"}"#) }
                guard let fields = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
                    Set(fields.keys).isSubset(of: ["header", "body", "image", "bulletPoints", "headerPosition"])
                else { return (.badRequest, #"{"errorMessage":"malformed"}"#) }
                guard let header = fields["header"] as? String, header.count <= 66 else {
                    return (.badRequest, #"{"errorCode":4000162,"errorMessage":"header too long"}"#)
                }
                guard let text = fields["body"] as? String, text.count <= 144 else {
                    return (.badRequest, #"{"errorCode":4000163,"errorMessage":"body too long"}"#)
                }
                let exists = self.messages.withLock { messages -> Bool in
                    if messages[id] != nil { return true }
                    messages[id] = self.reviewState.withLock { $0 }
                    return false
                }
                if exists { return (.conflict, #"{"errorCode":4090001,"errorMessage":"Message already exists."}"#) }
                self.messageBodies.withLock { $0[id] = String(decoding: body, as: UTF8.self) }
                return (.ok, "")
            }
            // The upload is kept; its answer is lost (the connection closes before it is read).
            let id = (context.parameters.get("id") ?? "").lowercased()
            if response.status == .ok, self.loseUploadAnswers.withLock({ $0.remove(id) != nil }) {
                return Response(status: .ok, headers: [.contentLength: "100"], body: ResponseBody { _ in throw CancellationError() })
            }
            return response
        }
        router.put("/inApps/v1/messaging/image/:id") { request, context in
            try await self.answer(request, context, endpoint: "uploadImage") { body in
                let id = (context.parameters.get("id") ?? "").lowercased()
                guard request.headers[.contentType] == "image/png", body.starts(with: [0x89, 0x50, 0x4E, 0x47]) else {
                    return (.badRequest, #"{"errorCode":4000161,"errorMessage":"Invalid image."}"#)
                }
                let state = self.reviewState.withLock { $0 }
                let exists = self.images.withLock { images -> Bool in
                    if images[id] != nil { return true }
                    images[id] = state
                    return false
                }
                return exists ? (.conflict, #"{"errorCode":4090000,"errorMessage":"Image already exists."}"#) : (.ok, "")
            }
        }
        router.get("/inApps/v1/messaging/image/list") { request, context in
            try await self.answer(request, context) { _ in
                let items = self.images.withLock { $0 }.map { ["imageIdentifier": $0.key, "imageState": $0.value] }
                return (.ok, String(decoding: try JSONSerialization.data(withJSONObject: ["imageIdentifiers": items]), as: UTF8.self))
            }
        }
        router.put("/inApps/v1/messaging/default/:product/:locale") { request, context in
            try await self.answer(request, context, endpoint: "configureDefaultMessage") { body in
                let key = "\(context.parameters.get("product") ?? "") \(context.parameters.get("locale") ?? "")"
                guard let fields = try? JSONSerialization.jsonObject(with: body) as? [String: Any], Set(fields.keys) == ["messageIdentifier"],
                    let id = (fields["messageIdentifier"] as? String)?.lowercased()
                else { return (.badRequest, #"{"errorMessage":"malformed"}"#) }
                switch self.messages.withLock({ $0[id] }) {
                case nil: return (.notFound, #"{"errorCode":4040015,"errorMessage":"Message not found."}"#)
                case "APPROVED"?:
                    self.defaults.withLock { $0[key] = id }
                    return (.ok, "")
                default: return (.forbidden, #"{"errorCode":4030017,"errorMessage":"Message not approved."}"#)
                }
            }
        }
        router.get("/inApps/v1/messaging/default/:product/:locale") { request, context in
            try await self.answer(request, context) { _ in
                let key = "\(context.parameters.get("product") ?? "") \(context.parameters.get("locale") ?? "")"
                guard let id = self.defaults.withLock({ $0[key] }) else {
                    return (.notFound, #"{"errorCode":4040020,"errorMessage":"Default message not found."}"#)
                }
                return (.ok, #"{"messageIdentifier":"\#(id)"}"#)
            }
        }
        router.get("/inApps/v1/messaging/realtime/url") { request, context in
            try await self.answer(request, context) { _ in
                guard let url = self.realtimeURL.withLock({ $0 }) else {
                    return (.notFound, #"{"errorCode":4040021,"errorMessage":"Realtime URL not found."}"#)
                }
                return (.ok, String(decoding: try JSONSerialization.data(withJSONObject: ["realtimeURL": url]), as: UTF8.self))
            }
        }
        router.put("/inApps/v1/messaging/realtime/url") { request, context in
            try await self.answer(request, context, endpoint: "configureRealtimeURL") { body in
                guard let fields = try? JSONSerialization.jsonObject(with: body) as? [String: Any], Set(fields.keys) == ["realtimeURL"],
                    let url = fields["realtimeURL"] as? String, url.hasPrefix("https://"), url.count <= 256
                else { return (.badRequest, #"{"errorCode":4000215,"errorMessage":"Invalid request. The url is invalid."}"#) }
                self.realtimeURL.withLock { $0 = url }
                return (.ok, "")
            }
        }
        router.post("/inApps/v1/messaging/performanceTest") { request, context in
            try await self.answer(request, context) { body in
                guard let fields = try? JSONSerialization.jsonObject(with: body) as? [String: Any], Set(fields.keys) == ["originalTransactionId"]
                else {
                    return (.badRequest, #"{"errorCode":4000211,"errorMessage":"Invalid performance test request."}"#)
                }
                let id = UUID().uuidString.lowercased()
                self.performanceTests.withLock { $0[id] = 1 }
                return (
                    .ok,
                    #"{"requestId":"\#(id)","config":{"maxConcurrentRequests":10,"responseTimeThreshold":700,"successRateThreshold":95,"totalDuration":1000,"totalRequests":20}}"#
                )
            }
        }
        router.get("/inApps/v1/messaging/performanceTest/result/:id") { request, context in
            try await self.answer(request, context) { _ in
                let id = context.parameters.get("id") ?? ""
                guard let left = self.performanceTests.withLock({ $0[id] }) else {
                    return (.notFound, #"{"errorCode":4040018,"errorMessage":"Performance test run not found."}"#)
                }
                self.performanceTests.withLock { $0[id] = left - 1 }
                let result = left > 0 ? "PENDING" : "PASS"
                return (
                    .ok,
                    #"{"result":"\#(result)","successRate":100,"numPending":\#(left > 0 ? 5 : 0),"responseTimes":{"average":40,"p50":35,"p90":60,"p95":70,"p99":90},"failures":{},"target":"https://reclaim.example.com/v1/apple/retention-messaging","config":{"maxConcurrentRequests":10,"responseTimeThreshold":700,"successRateThreshold":95,"totalDuration":1000,"totalRequests":20}}"#
                )
            }
        }
        router.get("/inApps/v1/messaging/message/list") { request, context in
            try await self.answer(request, context) { _ in
                let unlisted = self.unlistedMessages.withLock { $0 }
                let items = self.messages.withLock { $0 }.filter { !unlisted.contains($0.key) }
                    .map { ["messageIdentifier": $0.key, "messageState": $0.value] }
                return (.ok, String(decoding: try JSONSerialization.data(withJSONObject: ["messageIdentifiers": items]), as: UTF8.self))
            }
        }
        addAccountRoutes(to: router)
        router.post("/inApps/v1/notifications/test") { request, context in
            try await self.answer(request, context) { _ in (.ok, #"{"testNotificationToken":"test-token-1"}"#) }
        }
        router.get("/inApps/v1/notifications/test/:token") { request, context in
            try await self.answer(request, context) { _ in
                let polls = self.received.filter { $0.path.hasPrefix("/inApps/v1/notifications/test/") }.count
                guard polls > self.testPollsBeforeAttempt, let test = self.testNotification.withLock({ $0 }) else {
                    return (.ok, #"{"sendAttempts":[]}"#)
                }
                let answer: [String: Any] = [
                    "signedPayload": test.signedPayload,
                    "sendAttempts": [["attemptDate": Int64(Date().timeIntervalSince1970 * 1000), "sendAttemptResult": test.result]],
                ]
                return (.ok, String(decoding: try JSONSerialization.data(withJSONObject: answer), as: UTF8.self))
            }
        }
        return router
    }

    /// Records the request, checks its token, applies a scripted failure, else answers with `body`.
    func answer(
        _ request: Request,
        _ context: BasicRequestContext,
        endpoint: String = "",
        _ handler: (Data) throws -> (HTTPResponse.Status, String)
    ) async throws -> Response {
        let retryAt = limits[endpoint]?.admit()
        let number = requests.withLock {
            $0.append(Received(method: request.method.rawValue, path: request.uri.description, at: .now, limited: retryAt != nil))
            return $0.count
        }
        if latency > .zero { try await Task.sleep(for: latency) }
        if let retryAt {
            var response = Self.json(.tooManyRequests, #"{"errorCode":4290000,"errorMessage":"Rate limit exceeded."}"#)
            response.headers[.retryAfter] = "\(Int64((retryAt.timeIntervalSince1970 * 1000).rounded(.up)))"
            return response
        }
        let body = Data(try await request.body.collect(upTo: 1 << 20).readableBytesView)
        if let problem = tokenProblem(request.headers[.authorization]) {
            tokenProblems.withLock { $0.append(problem) }
            return Self.json(.unauthorized, #"{"errorCode":4010000,"errorMessage":"\#(problem)"}"#)
        }
        switch failures.withLock({ $0.removeValue(forKey: number) }) {
        case .cutMidAnswer?:
            let (_, text) = try handler(body)
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            headers[.contentLength] = "\(text.utf8.count)"
            return Response(
                status: .ok,
                headers: headers,
                body: ResponseBody { writer in
                    try await writer.write(ByteBuffer(string: String(text.prefix(text.count / 2))))
                    throw CancellationError()  // Hummingbird closes the connection mid-body.
                }
            )
        case .rateLimited(let wait)?:
            var response = Self.json(.tooManyRequests, #"{"errorCode":4290000,"errorMessage":"Rate limit exceeded."}"#)
            let until = Date().addingTimeInterval(Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18)
            response.headers[.retryAfter] = "\(Int64(until.timeIntervalSince1970 * 1000))"
            return response
        case .unauthorized?:
            return Self.json(.unauthorized, "")
        case .serverError?:
            return Self.json(.internalServerError, #"{"errorCode":5000000,"errorMessage":"An unknown error occurred."}"#)
        case .badRequest?:
            return Self.json(.badRequest, #"{"errorCode":4000006,"errorMessage":"Invalid transaction id."}"#)
        case nil:
            let (status, text) = try handler(body)
            return Self.json(status, text)
        }
    }

    private func historyPage(request: Request, body: Data) throws -> (HTTPResponse.Status, String) {
        struct Window: Decodable {
            let startDate: Int64
            let endDate: Int64
        }
        let window = try JSONDecoder().decode(Window.self, from: body)
        let matching = history.withLock { $0 }.filter { $0.signedDate >= window.startDate && $0.signedDate < window.endDate }
        let page = request.uri.queryParameters.get("paginationToken").flatMap { Int($0.dropFirst("page-".count)) } ?? 0
        let items = matching.dropFirst(page * 20).prefix(20)
        let hasMore = matching.count > (page + 1) * 20
        var answer: [String: Any] = [
            "notificationHistory": items.map {
                ["signedPayload": $0.signedPayload, "sendAttempts": [["attemptDate": $0.signedDate, "sendAttemptResult": "NO_RESPONSE"]]]
            },
            "hasMore": hasMore,
        ]
        if hasMore { answer["paginationToken"] = "page-\(page + 1)" }
        return (.ok, String(decoding: try JSONSerialization.data(withJSONObject: answer), as: UTF8.self))
    }

    /// Apple's error body for a `ConsumptionRequest` Apple refuses, or nil: its documented model (five fields, their
    /// types and values) and rules (customerConsented true; no consumptionPercentage for an auto-renewable subscription;
    /// 0 unless DELIVERED; GRANT_PRORATED with 1…99999 for other products).
    func consumptionRefusal(_ body: Data, transactionId: String) -> String? {
        func error(_ code: Int, _ message: String) -> String { #"{"errorCode":\#(code),"errorMessage":"\#(message)"}"# }
        guard let fields = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else { return #"{"errorMessage":"malformed"}"# }
        let known: Set = ["customerConsented", "consumptionPercentage", "deliveryStatus", "refundPreference", "sampleContentProvided"]
        guard Set(fields.keys).isSubset(of: known) else { return #"{"errorMessage":"unknown fields"}"# }
        guard fields["customerConsented"] as? Bool == true else {
            return error(4_000_035, "Invalid request. The customer consented field is invalid.")
        }
        guard let delivery = fields["deliveryStatus"] as? String, ConsumptionRequestBody.deliveryStatuses.contains(delivery) else {
            return error(4_000_036, "Invalid request. The delivery status field is invalid.")
        }
        guard fields["sampleContentProvided"] is Bool else {
            return error(4_000_041, "Invalid request. The sample content provided field is invalid.")
        }
        let preference = fields["refundPreference"] as? String
        if fields["refundPreference"] != nil, !ConsumptionRequestBody.refundPreferences.contains(preference ?? "") {
            return error(4_000_044, "Invalid request. The refund preference field is invalid.")
        }
        let autoRenewable = productTypes.withLock { $0[transactionId] ?? "Auto-Renewable Subscription" } == "Auto-Renewable Subscription"
        if let percentage = fields["consumptionPercentage"] {
            guard let value = percentage as? Int, (0...100_000).contains(value) else {
                return #"{"errorMessage":"consumption percentage out of range"}"#
            }
            if autoRenewable {
                return error(
                    4_000_209,
                    "Invalid request. The consumption percentage field is not supported for auto-renewable subscription transactions."
                )
            }
            if delivery != "DELIVERED" && value != 0 { return #"{"errorMessage":"undelivered consumption percentage non zero"}"# }
        }
        if preference == "GRANT_PRORATED", !autoRenewable, !(1...99_999).contains(fields["consumptionPercentage"] as? Int ?? 0) {
            return #"{"errorMessage":"consumption percentage out of range"}"#
        }
        return nil
    }

    /// What Apple would refuse in this Authorization header, or nil.
    func tokenProblem(_ authorization: String?) -> String? {
        guard let authorization, authorization.hasPrefix("Bearer ") else { return "no bearer token" }
        let parts = authorization.dropFirst("Bearer ".count).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Base64URL.decode(parts[0]), let claimsData = Base64URL.decode(parts[1]),
            let signatureData = Base64URL.decode(parts[2]),
            let header = try? JSONSerialization.jsonObject(with: headerData) as? [String: Any],
            let claims = try? JSONSerialization.jsonObject(with: claimsData) as? [String: Any]
        else { return "not a JWT" }
        guard header["alg"] as? String == "ES256", header["kid"] as? String == keyId, header["typ"] as? String == "JWT" else {
            return "header \(header)"
        }
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureData),
            publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8))
        else { return "signature" }
        let now = Int64(Date().timeIntervalSince1970)
        guard claims["iss"] as? String == issuerId, claims["aud"] as? String == "appstoreconnect-v1", claims["bid"] as? String == bundleId,
            let iat = (claims["iat"] as? NSNumber)?.int64Value, let exp = (claims["exp"] as? NSNumber)?.int64Value,
            iat <= now + 5, exp > now, exp - iat <= 3600
        else { return "claims \(claims)" }
        return nil
    }

    static func json(_ status: HTTPResponse.Status, _ text: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}

/// One Get All Subscription Statuses answer.
struct AppStoreStatusFixture: Sendable {
    let environment: String
    let bundleId: String
    let status: Int
    let originalTransactionId: String
    let signedTransactionInfo: String
    let signedRenewalInfo: String

    func json() throws -> String {
        let answer: [String: Any] = [
            "environment": environment, "bundleId": bundleId, "appAppleId": 1_234_567_890,
            "data": [
                [
                    "subscriptionGroupIdentifier": "21000000",
                    "lastTransactions": [
                        [
                            "status": status, "originalTransactionId": originalTransactionId, "signedTransactionInfo": signedTransactionInfo,
                            "signedRenewalInfo": signedRenewalInfo,
                        ]
                    ],
                ]
            ],
        ]
        return String(decoding: try JSONSerialization.data(withJSONObject: answer), as: UTF8.self)
    }
}
