import Foundation

/// The bodies of Apple's make-good and account-repair calls, as the App Store Server API documentation names their
/// fields (and as Apple's app-store-server-library models them: `ExtendRenewalDateRequest`, `ExtendRenewalDateResponse`,
/// `MassExtendRenewalDateRequest`, `MassExtendRenewalDateResponse`, `MassExtendRenewalDateStatusResponse`,
/// `UpdateAppAccountTokenRequest`).
extension AppStoreAPI {
    /// A body Apple would refuse, found before it is sent: said in Apple's words.
    public struct InvalidRequest: Error, CustomStringConvertible, Equatable {
        public let description: String
    }

    /// `extendReasonCode`: "The code that represents the reason for the subscription-renewal-date extension."
    /// Apple's values, named as its library's `ExtendReasonCode` names them: 0 undeclared, 1 customer satisfaction,
    /// 2 other, 3 service issue or outage.
    public enum ExtendReasonCode: Int, Codable, Sendable, CaseIterable {
        case undeclared = 0
        case customerSatisfaction = 1
        case other = 2
        case serviceIssueOrOutage = 3
    }

    /// `extendByDays`: "The number of days to extend the subscription renewal date." "The number of days is a
    /// number from 1 to 90."
    public static let extendByDaysRange = 1...90

    /// `requestIdentifier`: "A string that contains a unique identifier you provide to track each
    /// subscription-renewal-date extension request." "The maximum length of the string is 128 characters."
    public static let requestIdentifierMaxLength = 128

    static func checkExtension(days: Int, requestIdentifier: String) throws(InvalidRequest) {
        guard extendByDaysRange.contains(days) else {
            throw InvalidRequest(description: "extendByDays must be a number from 1 to 90 (got \(days))")
        }
        guard !requestIdentifier.isEmpty, requestIdentifier.count <= requestIdentifierMaxLength else {
            throw InvalidRequest(description: "requestIdentifier must be 1 to 128 characters (got \(requestIdentifier.count))")
        }
    }

    /// Extend a Subscription Renewal Date's body: "The request body that contains subscription-renewal-extension data
    /// for an individual subscription."
    public struct ExtendRenewalDateRequest: Codable, Sendable, Equatable {
        public var extendByDays: Int
        public var extendReasonCode: ExtendReasonCode
        public var requestIdentifier: String

        public init(extendByDays: Int, extendReasonCode: ExtendReasonCode, requestIdentifier: String) throws(InvalidRequest) {
            try AppStoreAPI.checkExtension(days: extendByDays, requestIdentifier: requestIdentifier)
            self.extendByDays = extendByDays
            self.extendReasonCode = extendReasonCode
            self.requestIdentifier = requestIdentifier
        }
    }

    /// "A response that indicates whether an individual renewal-date extension succeeded, and related details."
    public struct ExtendRenewalDateResponse: Codable, Sendable, Equatable {
        public var originalTransactionId: String?
        public var webOrderLineItemId: String?
        /// "A Boolean value that indicates whether the subscription-renewal-date extension succeeded."
        public var success: Bool?
        /// "The new subscription expiration date for a subscription-renewal extension", UNIX milliseconds.
        public var effectiveDate: Int64?
    }

    /// Extend Subscription Renewal Dates for All Active Subscribers' body: "The request body that contains
    /// subscription-renewal-extension data to apply for all eligible active subscribers."
    public struct MassExtendRenewalDateRequest: Codable, Sendable, Equatable {
        public var requestIdentifier: String
        public var extendByDays: Int
        public var extendReasonCode: ExtendReasonCode
        public var productId: String
        /// "Omit this list to request the subscription-renewal-date extension in all storefronts."
        public var storefrontCountryCodes: [String]?

        public init(
            requestIdentifier: String,
            extendByDays: Int,
            extendReasonCode: ExtendReasonCode,
            productId: String,
            storefrontCountryCodes: [String]? = nil
        ) throws(InvalidRequest) {
            try AppStoreAPI.checkExtension(days: extendByDays, requestIdentifier: requestIdentifier)
            guard !productId.isEmpty else { throw InvalidRequest(description: "productId is required") }
            // InvalidEmptyStorefrontCountryCodeListError: a list, when given, names at least one storefront.
            if let codes = storefrontCountryCodes {
                guard !codes.isEmpty else {
                    throw InvalidRequest(description: "storefrontCountryCodes must name at least one storefront, or be left out for all")
                }
                // "A three-letter code that represents the country or region associated with the App Store storefront."
                for code in codes where code.count != 3 || !code.allSatisfy({ $0.isASCII && $0.isUppercase }) {
                    throw InvalidRequest(description: "\(code) is not a storefront country code (three capital letters, e.g. USA)")
                }
            }
            self.requestIdentifier = requestIdentifier
            self.extendByDays = extendByDays
            self.extendReasonCode = extendReasonCode
            self.productId = productId
            self.storefrontCountryCodes = storefrontCountryCodes
        }
    }

    /// "A response that indicates the server successfully received the subscription-renewal-date extension request."
    public struct MassExtendRenewalDateResponse: Codable, Sendable, Equatable {
        public var requestIdentifier: String?
    }

    /// Get Status of Subscription Renewal Date Extensions' answer: "A response that indicates the current status of
    /// a request to extend the subscription renewal date to all eligible subscribers."
    public struct MassExtendRenewalDateStatusResponse: Codable, Sendable, Equatable {
        public var requestIdentifier: String?
        /// "A Boolean value that indicates whether the App Store completed the request to extend a subscription
        /// renewal date to active subscribers."
        public var complete: Bool?
        /// UNIX milliseconds.
        public var completeDate: Int64?
        public var succeededCount: Int64?
        public var failedCount: Int64?
    }

    /// Set App Account Token's body: "The request body that contains an app account token value."
    public struct UpdateAppAccountTokenRequest: Codable, Sendable, Equatable {
        /// Lowercase, as the app sets it with `Product.PurchaseOption.appAccountToken(_:)` and as Apple reports it
        /// in `appAccountToken` ("a UUID").
        public var appAccountToken: String

        public init(appAccountToken: UUID) {
            self.appAccountToken = appAccountToken.uuidString.lowercased()
        }
    }
}
