import Foundation

/// Request and response bodies of the App Store Server API endpoints Reclaim calls, as Apple's App Store
/// Server API documentation names their fields.
public enum AppStoreAPI {
    /// Apple's hosts; `serverAPI.baseURL` overrides them.
    public static func baseURL(for environment: String) -> String? {
        switch environment {
        case "Production": "https://api.storekit.apple.com"
        case "Sandbox": "https://api.storekit-sandbox.apple.com"
        default: nil
        }
    }

    /// How far back Get Notification History reaches.
    public static func historyLimit(for environment: String) -> TimeInterval {
        environment == "Production" ? 180 * 86_400 : 30 * 86_400
    }

    public struct NotificationHistoryRequest: Codable, Sendable, Equatable {
        /// UNIX milliseconds.
        public var startDate: Int64
        public var endDate: Int64
        public var onlyFailures: Bool?

        public init(startDate: Int64, endDate: Int64, onlyFailures: Bool? = nil) {
            self.startDate = startDate
            self.endDate = endDate
            self.onlyFailures = onlyFailures
        }
    }

    public struct SendAttempt: Codable, Sendable, Equatable {
        public var attemptDate: Int64?
        public var sendAttemptResult: String?
    }

    public struct NotificationHistoryItem: Codable, Sendable, Equatable {
        public var signedPayload: String
        public var sendAttempts: [SendAttempt]?
    }

    public struct NotificationHistoryResponse: Codable, Sendable, Equatable {
        public var notificationHistory: [NotificationHistoryItem]
        public var hasMore: Bool
        public var paginationToken: String?
    }

    public struct LastTransaction: Codable, Sendable, Equatable {
        public var status: Int64?
        public var originalTransactionId: String?
        public var signedTransactionInfo: String?
        public var signedRenewalInfo: String?
    }

    public struct SubscriptionGroupStatus: Codable, Sendable, Equatable {
        public var subscriptionGroupIdentifier: String?
        public var lastTransactions: [LastTransaction]
    }

    public struct StatusResponse: Codable, Sendable, Equatable {
        public var environment: String?
        public var bundleId: String?
        public var appAppleId: Int64?
        public var data: [SubscriptionGroupStatus]
    }

    public struct TestNotificationToken: Codable, Sendable, Equatable {
        public var testNotificationToken: String
    }

    public struct TestNotificationStatus: Codable, Sendable, Equatable {
        public var signedPayload: String?
        public var sendAttempts: [SendAttempt]?
    }

    /// Retention Messaging's `GetMessageListResponse`: `messageIdentifiers`, an array of `GetMessageListResponseItem`
    /// (`messageIdentifier`, a UUID; `messageState`: "The approval state of the message", PENDING, APPROVED or REJECTED).
    public struct MessageList: Codable, Sendable, Equatable {
        public struct Item: Codable, Sendable, Equatable {
            public var messageIdentifier: String?
            public var messageState: String?
        }
        public var messageIdentifiers: [Item]?
    }

    /// The answer of an endpoint that answers with a status alone (Apple: "200 OK", "202 Accepted", no body).
    public struct NoContent: Decodable, Sendable {
        public init() {}
    }

    struct ErrorBody: Decodable {
        var errorCode: Int64?
        var errorMessage: String?
    }
}
