import AsyncHTTPClient
import Foundation
import Logging
import Metrics
import NIOCore
import NIOHTTP1
import ReclaimDomain

/// A client of the App Store Server API for one app and environment: bearer token, pace, timeouts, retries.
///
/// Every request waits for its slot in the endpoint's rate budget (``AppleAPIPacer``, shared by every caller and
/// process). A 429 pauses the endpoint for every caller until its `Retry-After`; 5xx, Apple's retryable error codes
/// and lost connections are retried with backoff (``AppStoreRetryPolicy``), all within the call's deadline; anything
/// else (401 and 403 first) fails at once with an ``AppStoreAPIError`` that says what to fix. Each attempt is
/// counted in `reclaim_apple_api_requests_total{endpoint,status}` and timed in
/// `reclaim_apple_api_request_duration_seconds{endpoint}`. No log line or error carries the token.
public struct AppStoreServerAPIClient: Sendable {
    public let bundleId: String
    public let environment: String
    let baseURL: String
    let http: HTTPClient
    let token: AppStoreBearerToken
    let keyId: String
    let api: ReclaimConfig.ServerAPI
    let pacer: AppleAPIPacer
    var retry = AppStoreRetryPolicy()
    /// Run after each attempt's pacing slot and before it is sent; throwing stops the call (a call lane confirms it
    /// still holds its job).
    var beforeEachAttempt: (@Sendable () async throws -> Void)?
    /// Per attempt: connecting, sending and reading the whole answer.
    var timeout: TimeAmount = .seconds(30)
    let logger: Logger

    /// Largest answer read (a history page is 20 notifications of a few KiB).
    static let maxResponseBytes = 8 * 1024 * 1024

    public init(app: ReclaimConfig.App, environment: String, http: HTTPClient, pacer: AppleAPIPacer, logger: Logger) throws {
        guard let api = app.serverAPI else {
            throw ConfigError("app \(app.bundleId) has no serverAPI (keyId, issuerId, file): the App Store Server API needs an In-App Purchase key")
        }
        guard let base = api.baseURL ?? AppStoreAPI.baseURL(for: environment) else {
            throw ConfigError("app \(app.bundleId): the App Store Server API has no \(environment) environment")
        }
        guard let contents = FileManager.default.contents(atPath: api.file) else {
            throw ConfigError("app \(app.bundleId): serverAPI: cannot read the key file \(api.file)")
        }
        let key: SigningKey
        do {
            key = try SigningKey.load(keyId: api.keyId, contents: contents, source: api.file)
        } catch {
            throw ConfigError("app \(app.bundleId): serverAPI: \(error)")
        }
        self.bundleId = app.bundleId
        self.environment = environment
        self.baseURL = base.hasSuffix("/") ? String(base.dropLast()) : base
        self.http = http
        self.token = AppStoreBearerToken(key: key, issuerId: api.issuerId, bundleId: app.bundleId)
        self.keyId = api.keyId
        self.api = api
        self.pacer = pacer
        self.logger = logger
    }

    /// Get Notification History: one page (20 notifications), from the start or from `paginationToken`.
    public func notificationHistory(
        _ request: AppStoreAPI.NotificationHistoryRequest,
        paginationToken: String?
    ) async throws -> AppStoreAPI.NotificationHistoryResponse {
        var path = "/inApps/v1/notifications/history"
        if let paginationToken {
            path += "?paginationToken=" + (paginationToken.addingPercentEncoding(withAllowedCharacters: .urlQueryValueAllowed) ?? paginationToken)
        }
        return try await send(.POST, path, body: try JSONEncoder().encode(request), endpoint: .getNotificationHistory)
    }

    /// Get All Subscription Statuses of the subscription that `transactionId` belongs to.
    public func subscriptionStatuses(transactionId: String) async throws -> AppStoreAPI.StatusResponse {
        let id = transactionId.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? transactionId
        return try await send(.GET, "/inApps/v1/subscriptions/\(id)", body: nil, endpoint: .getAllSubscriptionStatuses)
    }

    /// Send Consumption Information (App Store Server API 1.19+): `PUT /inApps/v2/transactions/consumption/{transactionId}`
    /// with a `ConsumptionRequest`; Apple answers "202 Accepted: The App Store server received the consumption
    /// information." Sent again after a lost answer: a second PUT of the same body replaces the first.
    public func sendConsumptionInformation(transactionId: String, body: Data) async throws {
        let id = transactionId.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? transactionId
        let _: AppStoreAPI.NoContent = try await send(
            .PUT,
            "/inApps/v2/transactions/consumption/\(id)",
            body: body,
            endpoint: .sendConsumptionInformation
        )
    }

    /// Request a Test Notification: Apple sends a TEST notification to the app's notification URL.
    public func requestTestNotification() async throws -> String {
        let answer: AppStoreAPI.TestNotificationToken = try await send(
            .POST,
            "/inApps/v1/notifications/test",
            body: nil,
            endpoint: .requestTestNotification
        )
        return answer.testNotificationToken
    }

    /// Get Test Notification Status.
    public func testNotificationStatus(token: String) async throws -> AppStoreAPI.TestNotificationStatus {
        let id = token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? token
        return try await send(.GET, "/inApps/v1/notifications/test/\(id)", body: nil, endpoint: .getTestNotificationStatus)
    }

    /// Retention Messaging's Get Message List: every message identifier uploaded for the app, with its state
    /// (`PENDING`, `APPROVED`, `REJECTED`). `GET /inApps/v1/messaging/message/list` answers `GetMessageListResponse`:
    /// "A response that contains status information for all messages."
    public func messageList() async throws -> AppStoreAPI.MessageList {
        try await send(.GET, "/inApps/v1/messaging/message/list", body: nil, endpoint: .getMessageList)
    }

    func send<Answer: Decodable>(
        _ method: HTTPMethod,
        _ path: String,
        body: Data?,
        contentType: String = "application/json",
        endpoint: AppleEndpoint
    ) async throws -> Answer {
        let lane = pacer.lane(bundleId: bundleId, environment: environment, endpoint: endpoint, rate: api.rate(endpoint, in: environment))
        let deadline = ContinuousClock.now + retry.deadline
        var failures = 0
        while true {
            try await lane.acquire()
            try await beforeEachAttempt?()
            let wait: Duration
            let failure: AppStoreAPIError
            do {
                return try await once(method, path, body: body, contentType: contentType, endpoint: endpoint)
            } catch let error as RetryableAnswer where error.error.status == 429 {
                // Apple's rate limit: the whole endpoint waits (every caller, every process), then this request
                // takes a new slot. Without a Retry-After, a second. The pause holds for everyone even when this
                // caller cannot wait that long: the others would otherwise keep sending into Apple's limit.
                failure = error.error
                wait = error.retryAfter ?? .seconds(1)
                await lane.pause(for: wait)
                logger.notice(
                    "Apple's rate limit (429): the endpoint pauses",
                    metadata: ["request": "\(endpoint.name)", "app": "\(bundleId)", "environment": "\(environment)", "wait": "\(wait)"]
                )
                guard ContinuousClock.now + wait < deadline else { throw failure.waited(wait, beyond: retry.deadline) }
                continue
            } catch let error as RetryableAnswer {
                failure = error.error
                failures += 1
                wait = error.retryAfter ?? retry.backoff(after: failures)
            } catch let error as AppStoreAPIError {
                throw error
            } catch {
                // Connection refused, reset or cut mid-answer, timeouts: the request may be sent again (every endpoint
                // Reclaim calls is safe to repeat: reads, a test notification, an answer that replaces the last).
                failure = .transport(error, request: endpoint.name)
                failures += 1
                wait = retry.backoff(after: failures)
            }
            guard failures < retry.maxAttempts else { throw failure }
            guard ContinuousClock.now + wait < deadline else { throw failure.waited(wait, beyond: retry.deadline) }
            logger.notice(
                "App Store Server API call failed; retrying",
                metadata: ["request": "\(endpoint.name)", "attempt": "\(failures)", "wait": "\(wait)", "error": "\(failure)"]
            )
            try await Task.sleep(for: max(wait, .milliseconds(1)))
        }
    }

    private struct RetryableAnswer: Error {
        let error: AppStoreAPIError
        let retryAfter: Duration?
    }

    private func once<Answer: Decodable>(
        _ method: HTTPMethod,
        _ path: String,
        body: Data?,
        contentType: String,
        endpoint: AppleEndpoint
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(try token.token())")
        request.headers.add(name: "User-Agent", value: "Reclaim")
        request.headers.add(name: "Accept", value: "application/json")
        if let body {
            request.headers.add(name: "Content-Type", value: contentType)
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let started = ContinuousClock.now
        let status: Int
        let bytes: ByteBuffer
        let headers: HTTPHeaders
        do {
            let response = try await http.execute(request, timeout: timeout)
            bytes = try await response.body.collect(upTo: Self.maxResponseBytes)
            status = Int(response.status.code)
            headers = response.headers
        } catch {
            Self.count(endpoint, status: "transport", since: started)
            throw error
        }
        Self.count(endpoint, status: "\(status)", since: started)
        guard (200..<300).contains(status) else {
            let apple = try? JSONDecoder().decode(AppStoreAPI.ErrorBody.self, from: Data(bytes.readableBytesView))
            let error = AppStoreAPIError.http(
                status: status,
                errorCode: apple?.errorCode,
                message: apple?.errorMessage,
                request: endpoint.name,
                app: bundleId,
                keyId: keyId
            )
            if error.isRetryable {
                throw RetryableAnswer(error: error, retryAfter: AppStoreRetryPolicy.retryAfter(headers.first(name: "Retry-After")))
            }
            throw error
        }
        if Answer.self == AppStoreAPI.NoContent.self, let none = AppStoreAPI.NoContent() as? Answer { return none }
        do {
            return try JSONDecoder().decode(Answer.self, from: Data(bytes.readableBytesView))
        } catch {
            throw AppStoreAPIError(status: status, errorCode: nil, description: "\(endpoint.name): Apple's answer could not be read: \(error)")
        }
    }

    private static func count(_ endpoint: AppleEndpoint, status: String, since started: ContinuousClock.Instant) {
        Counter(label: "reclaim_apple_api_requests_total", dimensions: [("endpoint", endpoint.rawValue), ("status", status)]).increment()
        Metrics.Timer(label: "reclaim_apple_api_request_duration_seconds", dimensions: [("endpoint", endpoint.rawValue)])
            .recordNanoseconds((ContinuousClock.now - started).nanoseconds)
    }
}

extension CharacterSet {
    /// Characters a query value may hold unescaped ('&', '=', '+' and '#' escaped).
    static let urlQueryValueAllowed = CharacterSet.urlQueryAllowed.subtracting(CharacterSet(charactersIn: "&=+#"))
}
