/// The App Store Server API and Retention Messaging API endpoints Reclaim calls, with Apple's rate limits.
///
/// App Store Server API, *Identifying rate limits*: "The App Store Server API limits the number of requests that
/// you can submit to each endpoint within a specified timespan. The request limits apply per app." and "The
/// following table lists the rate limits for each endpoint in the production environment, expressed in requests
/// per second. The system enforces rate limits on an hourly basis." Its table is `productionRate` below; "The rate
/// limits in the sandbox environment are 10% of the limits in the table above." Retention Messaging's own
/// *Identifying rate limits* page says the same of its endpoints, with its own table. Both warn: "The App Store
/// server may make adjustments to reduce or increase these rate limits as needed at any time."
///
/// `serverAPI.requestsPerSecond` lowers any of them per app (docs/configuration.md); it may not raise one.
public enum AppleEndpoint: String, CaseIterable, Sendable {
    case getTransactionInfo
    case getTransactionHistory
    case getAllSubscriptionStatuses
    case sendConsumptionInformation
    case getNotificationHistory
    case requestTestNotification
    case getTestNotificationStatus
    case extendSubscriptionRenewalDate
    case extendRenewalDatesForAllActiveSubscribers
    case getStatusOfSubscriptionRenewalDateExtensions
    case setAppAccountToken
    // Retention Messaging API.
    case uploadMessage
    case getMessageList
    case deleteMessage
    case uploadImage
    case getImageList
    case deleteImage
    case configureDefaultMessage
    case getDefaultMessage
    case deleteDefaultMessage
    case configureRealtimeURL
    case getRealtimeURL
    case deleteRealtimeURL
    case initiatePerformanceTest
    case getPerformanceTestResults

    /// Apple's name for it, as its documentation titles the page.
    public var name: String {
        switch self {
        case .getTransactionInfo: "Get Transaction Info"
        case .getTransactionHistory: "Get Transaction History"
        case .getAllSubscriptionStatuses: "Get All Subscription Statuses"
        case .sendConsumptionInformation: "Send Consumption Information"
        case .getNotificationHistory: "Get Notification History"
        case .requestTestNotification: "Request a Test Notification"
        case .getTestNotificationStatus: "Get Test Notification Status"
        case .extendSubscriptionRenewalDate: "Extend a Subscription Renewal Date"
        case .extendRenewalDatesForAllActiveSubscribers: "Extend Subscription Renewal Dates for All Active Subscribers"
        case .getStatusOfSubscriptionRenewalDateExtensions: "Get Status of Subscription Renewal Date Extensions"
        case .setAppAccountToken: "Set App Account Token"
        case .uploadMessage: "Upload Message"
        case .getMessageList: "Get Message List"
        case .deleteMessage: "Delete Message"
        case .uploadImage: "Upload Image"
        case .getImageList: "Get Image List"
        case .deleteImage: "Delete Image"
        case .configureDefaultMessage: "Configure Default Message"
        case .getDefaultMessage: "Get Default Message"
        case .deleteDefaultMessage: "Delete Default Message"
        case .configureRealtimeURL: "Configure Realtime URL"
        case .getRealtimeURL: "Get Realtime URL"
        case .deleteRealtimeURL: "Delete Realtime URL"
        case .initiatePerformanceTest: "Initiate Performance Test"
        case .getPerformanceTestResults: "Get Performance Test Results"
        }
    }

    /// Apple's limit in Production, requests per second, as its tables give it.
    public var productionRate: Double {
        switch self {
        // "Get Transaction Info | 50", "Get Transaction History | 50", "Get All Subscription Statuses | 50",
        // "Send Consumption Information | 50", "Get Notification History | 50"
        case .getTransactionInfo, .getTransactionHistory, .getAllSubscriptionStatuses, .sendConsumptionInformation, .getNotificationHistory: 50
        // "Extend a Subscription Renewal Date | 20", "Set App Account Token | 20"
        case .extendSubscriptionRenewalDate, .setAppAccountToken: 20
        // "Request a Test Notification | 1", "Get Test Notification Status | 1", "Extend Subscription Renewal Dates for
        // All Active Subscribers | 1", "Get Status of Subscription Renewal Date Extensions | 1"
        case .requestTestNotification, .getTestNotificationStatus, .extendRenewalDatesForAllActiveSubscribers,
            .getStatusOfSubscriptionRenewalDateExtensions:
            1
        // Retention Messaging: "Configure Default Message | 10"
        case .configureDefaultMessage: 10
        // Retention Messaging: every other endpoint "| 1" (Upload Message, Get Message List, Delete Message, Upload
        // Image, Get Image List, Delete Image, Get/Delete Default Message, Configure/Get/Delete Realtime URL,
        // Initiate Performance Test, Get Performance Test Results).
        case .uploadMessage, .getMessageList, .deleteMessage, .uploadImage, .getImageList, .deleteImage, .getDefaultMessage,
            .deleteDefaultMessage, .configureRealtimeURL, .getRealtimeURL, .deleteRealtimeURL, .initiatePerformanceTest,
            .getPerformanceTestResults:
            1
        }
    }

    /// Apple's limit in `environment`: the production figure, a tenth of it in Sandbox.
    public func appleRate(in environment: String) -> Double {
        environment == "Sandbox" ? productionRate / 10 : productionRate
    }
}
