import AsyncHTTPClient
import Foundation
import NIOHTTP1

/// The Retention Messaging API's set-up endpoints (Apple's *Retention Messaging API*; request and response bodies as
/// Apple names their fields, and as app-store-server-library models them). Every one goes through the paced client:
/// Apple allows 1 request a second for each, 10 for Configure Default Message (``AppleEndpoint``).
extension AppStoreServerAPIClient {
    /// `UploadMessageRequestBody`: `header` ("Maximum length: 66"), `body` ("Maximum length: 144"), optional `image`
    /// (`UploadMessageImage`: `imageIdentifier`, `altText` "Maximum length: 150"), optional `bulletPoints`
    /// (`BulletPoint`: `text` ≤ 66, `imageIdentifier`, `altText`), optional `headerPosition` (`ABOVE_BODY`,
    /// `ABOVE_IMAGE`).
    public struct UploadMessage: Codable, Sendable, Equatable {
        public struct Image: Codable, Sendable, Equatable {
            public var imageIdentifier: String
            public var altText: String
        }
        public struct BulletPoint: Codable, Sendable, Equatable {
            public var text: String
            public var imageIdentifier: String
            public var altText: String
        }
        public var header: String
        public var body: String
        public var image: Image?
        public var bulletPoints: [BulletPoint]?
        public var headerPosition: String?
    }

    /// Get Image List's `GetImageListResponse`: `imageIdentifiers` of `imageIdentifier` and `imageState`.
    public struct ImageList: Codable, Sendable, Equatable {
        public struct Item: Codable, Sendable, Equatable {
            public var imageIdentifier: String?
            public var imageState: String?
        }
        public var imageIdentifiers: [Item]?
    }

    public struct MessageIdentifier: Codable, Sendable, Equatable {
        public var messageIdentifier: String?
    }

    public struct RealtimeURL: Codable, Sendable, Equatable {
        public var realtimeURL: String?
    }

    /// `PerformanceTestConfig`: "maxConcurrentRequests", "responseTimeThreshold" (ms), "successRateThreshold" (%),
    /// "totalDuration" (ms), "totalRequests".
    public struct PerformanceTestConfig: Codable, Sendable, Equatable {
        public var maxConcurrentRequests: Int64?
        public var responseTimeThreshold: Int64?
        public var successRateThreshold: Int64?
        public var totalDuration: Int64?
        public var totalRequests: Int64?
    }

    /// `PerformanceTestResponse`: `config` and `requestId`.
    public struct PerformanceTestStarted: Codable, Sendable, Equatable {
        public var config: PerformanceTestConfig?
        public var requestId: String
    }

    /// `PerformanceTestResultResponse`: `result` (`PENDING`, `PASS`, `FAIL`), `successRate`, `numPending`,
    /// `responseTimes` (`average`, `p50`, `p90`, `p95`, `p99`, ms), `failures` (counts by reason), `target`, `config`.
    public struct PerformanceTestResult: Codable, Sendable, Equatable {
        public struct ResponseTimes: Codable, Sendable, Equatable {
            public var average: Int64?
            public var p50: Int64?
            public var p90: Int64?
            public var p95: Int64?
            public var p99: Int64?
        }
        public var config: PerformanceTestConfig?
        public var failures: [String: Int64]?
        public var numPending: Int64?
        public var responseTimes: ResponseTimes?
        public var result: String?
        public var successRate: Int64?
        public var target: String?
    }

    /// Upload Message: `PUT /inApps/v1/messaging/message/{messageIdentifier}`.
    public func uploadMessage(_ id: String, _ message: UploadMessage) async throws {
        let _: AppStoreAPI.NoContent = try await send(
            .PUT,
            "/inApps/v1/messaging/message/\(Self.segment(id))",
            body: try JSONEncoder().encode(message),
            endpoint: .uploadMessage
        )
    }

    /// Upload Image: `PUT /inApps/v1/messaging/image/{imageIdentifier}?imageSize=FULL_SIZE|BULLET_POINT`, the PNG's bytes.
    public func uploadImage(_ id: String, png: Data, size: String) async throws {
        let _: AppStoreAPI.NoContent = try await send(
            .PUT,
            "/inApps/v1/messaging/image/\(Self.segment(id))?imageSize=\(size)",
            body: png,
            contentType: "image/png",
            endpoint: .uploadImage
        )
    }

    /// Get Image List: `GET /inApps/v1/messaging/image/list`.
    public func imageList() async throws -> ImageList {
        try await send(.GET, "/inApps/v1/messaging/image/list", body: nil, endpoint: .getImageList)
    }

    /// Configure Default Message: `PUT /inApps/v1/messaging/default/{productId}/{locale}` with
    /// `DefaultConfigurationRequest` (`messageIdentifier`). "This endpoint is idempotent."
    public func configureDefaultMessage(productId: String, locale: String, messageIdentifier: String) async throws {
        let _: AppStoreAPI.NoContent = try await send(
            .PUT,
            "/inApps/v1/messaging/default/\(Self.segment(productId))/\(Self.segment(locale))",
            body: try JSONEncoder().encode(MessageIdentifier(messageIdentifier: messageIdentifier)),
            endpoint: .configureDefaultMessage
        )
    }

    /// Get Default Message; nil when none is configured ("If a default message isn't configured, the endpoint returns
    /// an HTTP 404 error with DefaultMessageNotFoundError", 4040020).
    public func defaultMessage(productId: String, locale: String) async throws -> String? {
        do {
            let answer: MessageIdentifier = try await send(
                .GET,
                "/inApps/v1/messaging/default/\(Self.segment(productId))/\(Self.segment(locale))",
                body: nil,
                endpoint: .getDefaultMessage
            )
            return answer.messageIdentifier
        } catch let error as AppStoreAPIError where error.status == 404 && error.errorCode == 4_040_020 {
            return nil
        }
    }

    /// Get Realtime URL; nil when none is configured (404, RealtimeUrlNotFoundError 4040021). "The URL it provides is
    /// specific to the environment (sandbox or production) you use to call Get Realtime URL."
    public func realtimeURL() async throws -> String? {
        do {
            let answer: RealtimeURL = try await send(.GET, "/inApps/v1/messaging/realtime/url", body: nil, endpoint: .getRealtimeURL)
            return answer.realtimeURL
        } catch let error as AppStoreAPIError where error.status == 404 && error.errorCode == 4_040_021 {
            return nil
        }
    }

    /// Configure Realtime URL: `PUT /inApps/v1/messaging/realtime/url` with `RealtimeUrlRequest` (`realtimeURL`).
    public func configureRealtimeURL(_ url: String) async throws {
        let _: AppStoreAPI.NoContent = try await send(
            .PUT,
            "/inApps/v1/messaging/realtime/url",
            body: try JSONEncoder().encode(RealtimeURL(realtimeURL: url)),
            endpoint: .configureRealtimeURL
        )
    }

    /// Initiate Performance Test: `POST /inApps/v1/messaging/performanceTest` with `PerformanceTestRequest`
    /// (`originalTransactionId`). "The performance test runs only in the sandbox environment."
    public func initiatePerformanceTest(originalTransactionId: String) async throws -> PerformanceTestStarted {
        struct Request: Encodable { let originalTransactionId: String }
        return try await send(
            .POST,
            "/inApps/v1/messaging/performanceTest",
            body: try JSONEncoder().encode(Request(originalTransactionId: originalTransactionId)),
            endpoint: .initiatePerformanceTest
        )
    }

    /// Get Performance Test Results: `GET /inApps/v1/messaging/performanceTest/result/{requestId}`.
    public func performanceTestResult(requestId: String) async throws -> PerformanceTestResult {
        try await send(
            .GET,
            "/inApps/v1/messaging/performanceTest/result/\(Self.segment(requestId))",
            body: nil,
            endpoint: .getPerformanceTestResults
        )
    }

    static func segment(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? value
    }
}
