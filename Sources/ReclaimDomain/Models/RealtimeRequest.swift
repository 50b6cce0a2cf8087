/// A decoded Retention Messaging realtime request. Apple documents every field as required, so a request missing one does not decode.
public struct RealtimeRequest: Codable, Sendable, Equatable {
    public var originalTransactionId: String
    /// Identifies the app: a realtime request carries no bundleId.
    public var appAppleId: Int64
    public var productId: String
    /// e.g. "en-US".
    public var userLocale: String
    /// A UUID string.
    public var requestIdentifier: String
    /// UNIX milliseconds.
    public var signedDate: Int64
    public var environment: AppStoreEnvironment

    public init(
        originalTransactionId: String,
        appAppleId: Int64,
        productId: String,
        userLocale: String,
        requestIdentifier: String,
        signedDate: Int64,
        environment: AppStoreEnvironment
    ) {
        self.originalTransactionId = originalTransactionId
        self.appAppleId = appAppleId
        self.productId = productId
        self.userLocale = userLocale
        self.requestIdentifier = requestIdentifier
        self.signedDate = signedDate
        self.environment = environment
    }
}
