import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import ReclaimDomain

/// A client of the App Store Server API for one app and environment: bearer token, timeouts, retries.
///
/// Every call is retried on 429, 5xx, Apple's retryable error codes and lost connections
/// (``AppStoreRetryPolicy``); anything else fails at once with an ``AppStoreAPIError`` that says what to fix.
public struct AppStoreServerAPIClient: Sendable {
    public let bundleId: String
    public let environment: String
    let baseURL: String
    let http: HTTPClient
    let token: AppStoreBearerToken
    var retry = AppStoreRetryPolicy()
    /// Per attempt: connecting, sending and reading the whole answer.
    var timeout: TimeAmount = .seconds(30)
    let logger: Logger

    /// Largest answer read (a history page is 20 notifications of a few KiB).
    static let maxResponseBytes = 8 * 1024 * 1024

    public init(app: ReclaimConfig.App, environment: String, http: HTTPClient, logger: Logger) throws {
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
        return try await send(.POST, path, body: try JSONEncoder().encode(request), name: "Get Notification History")
    }

    /// Get All Subscription Statuses of the subscription that `transactionId` belongs to.
    public func subscriptionStatuses(transactionId: String) async throws -> AppStoreAPI.StatusResponse {
        let id = transactionId.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? transactionId
        return try await send(.GET, "/inApps/v1/subscriptions/\(id)", body: nil, name: "Get All Subscription Statuses")
    }

    /// Request a Test Notification: Apple sends a TEST notification to the app's notification URL.
    public func requestTestNotification() async throws -> String {
        let answer: AppStoreAPI.TestNotificationToken = try await send(
            .POST,
            "/inApps/v1/notifications/test",
            body: nil,
            name: "Request a Test Notification"
        )
        return answer.testNotificationToken
    }

    /// Get Test Notification Status.
    public func testNotificationStatus(token: String) async throws -> AppStoreAPI.TestNotificationStatus {
        let id = token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? token
        return try await send(.GET, "/inApps/v1/notifications/test/\(id)", body: nil, name: "Get Test Notification Status")
    }

    /// Retention Messaging's Get Message List: every message identifier uploaded for the app, with its state
    /// (`PENDING`, `APPROVED`, `REJECTED`). `GET /inApps/v1/messaging/message/list` answers `GetMessageListResponse`:
    /// "A response that contains status information for all messages."
    public func messageList() async throws -> AppStoreAPI.MessageList {
        try await send(.GET, "/inApps/v1/messaging/message/list", body: nil, name: "Get Message List")
    }

    private func send<Answer: Decodable>(_ method: HTTPMethod, _ path: String, body: Data?, name: String) async throws -> Answer {
        var attempt = 0
        while true {
            attempt += 1
            var wait: Duration
            let failure: AppStoreAPIError
            do {
                return try await once(method, path, body: body, name: name)
            } catch let error as RetryableAnswer {
                failure = error.error
                wait = error.retryAfter ?? retry.backoff(after: attempt)
            } catch let error as AppStoreAPIError {
                throw error
            } catch {
                // Connection refused, reset or cut mid-answer, timeouts: the request may be sent again (all four
                // endpoints are safe to repeat: reads, and a test notification more).
                failure = .transport(error, request: name)
                wait = retry.backoff(after: attempt)
            }
            guard attempt < retry.maxAttempts else { throw failure }
            guard wait <= retry.maxRetryAfter else {
                throw AppStoreAPIError(
                    status: failure.status,
                    errorCode: failure.errorCode,
                    description: "\(failure); Apple asks to wait \(wait), longer than Reclaim waits"
                )
            }
            wait = max(wait, .milliseconds(1))
            logger.notice(
                "App Store Server API call failed; retrying",
                metadata: ["request": "\(name)", "attempt": "\(attempt)", "wait": "\(wait)", "error": "\(failure)"]
            )
            try await Task.sleep(for: wait)
        }
    }

    private struct RetryableAnswer: Error {
        let error: AppStoreAPIError
        let retryAfter: Duration?
    }

    private func once<Answer: Decodable>(_ method: HTTPMethod, _ path: String, body: Data?, name: String) async throws -> Answer {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(try token.token())")
        request.headers.add(name: "User-Agent", value: "Reclaim")
        request.headers.add(name: "Accept", value: "application/json")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response = try await http.execute(request, timeout: timeout)
        let bytes = try await response.body.collect(upTo: Self.maxResponseBytes)
        let status = Int(response.status.code)
        guard (200..<300).contains(status) else {
            let apple = try? JSONDecoder().decode(AppStoreAPI.ErrorBody.self, from: Data(bytes.readableBytesView))
            let error = AppStoreAPIError.http(status: status, errorCode: apple?.errorCode, message: apple?.errorMessage, request: name, app: bundleId)
            if error.isRetryable {
                throw RetryableAnswer(error: error, retryAfter: AppStoreRetryPolicy.retryAfter(response.headers.first(name: "Retry-After")))
            }
            throw error
        }
        do {
            return try JSONDecoder().decode(Answer.self, from: Data(bytes.readableBytesView))
        } catch {
            throw AppStoreAPIError(status: status, errorCode: nil, description: "\(name): Apple's answer could not be read: \(error)")
        }
    }
}

extension CharacterSet {
    /// Characters a query value may hold unescaped ('&', '=', '+' and '#' escaped).
    static let urlQueryValueAllowed = CharacterSet.urlQueryAllowed.subtracting(CharacterSet(charactersIn: "&=+#"))
}
