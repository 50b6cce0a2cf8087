/// A decoded `signedTransactionInfo` (JWSTransactionDecodedPayload). Every field is optional, as in Apple's spec.
public struct TransactionInfo: Codable, Sendable, Equatable {
    public var originalTransactionId: String?
    public var transactionId: String?
    public var webOrderLineItemId: String?
    public var bundleId: String?
    public var productId: String?
    public var subscriptionGroupIdentifier: String?
    /// UNIX milliseconds, like every date here.
    public var purchaseDate: Int64?
    public var originalPurchaseDate: Int64?
    public var expiresDate: Int64?
    public var quantity: Int64?
    /// "Auto-Renewable Subscription", "Non-Consumable", "Consumable", "Non-Renewing Subscription".
    public var type: String?
    /// The UUID the app set on the purchase, as Apple sends it.
    public var appAccountToken: String?
    /// "FAMILY_SHARED" or "PURCHASED".
    public var inAppOwnershipType: String?
    public var signedDate: Int64?
    /// 0 other, 1 an issue in the app.
    public var revocationReason: Int64?
    public var revocationDate: Int64?
    public var isUpgraded: Bool?
    /// 1 introductory, 2 promotional, 3 offer code, 4 win-back.
    public var offerType: Int64?
    public var offerIdentifier: String?
    public var environment: AppStoreEnvironment?
    /// Three-letter country code.
    public var storefront: String?
    public var storefrontId: String?
    /// "PURCHASE" or "RENEWAL".
    public var transactionReason: String?
    public var currency: String?
    /// Milli-units of `currency`.
    public var price: Int64?
    /// "FREE_TRIAL", "PAY_AS_YOU_GO", "PAY_UP_FRONT", "ONE_TIME".
    public var offerDiscountType: String?
    public var appTransactionId: String?
    /// "MONTHLY" (monthly payments with a 12-month commitment) or "BILLED_UPFRONT", as Apple sends it (App Store
    /// Server API 1.21; an unknown value is kept as it is); absent: a plan without a commitment, or an older payload.
    public var billingPlanType: String?
    /// The 12-month commitment of a MONTHLY plan (`TransactionCommitmentInfo`).
    public var commitmentInfo: TransactionCommitmentInfo?
    /// ISO 8601 duration.
    public var offerPeriod: String?
    /// "REFUND_FULL", "REFUND_PRORATED", "FAMILY_REVOKE".
    public var revocationType: String?
    /// Milli-units (percent × 1000).
    public var revocationPercentage: Int64?

    public init(
        originalTransactionId: String? = nil,
        transactionId: String? = nil,
        webOrderLineItemId: String? = nil,
        bundleId: String? = nil,
        productId: String? = nil,
        subscriptionGroupIdentifier: String? = nil,
        purchaseDate: Int64? = nil,
        originalPurchaseDate: Int64? = nil,
        expiresDate: Int64? = nil,
        quantity: Int64? = nil,
        type: String? = nil,
        appAccountToken: String? = nil,
        inAppOwnershipType: String? = nil,
        signedDate: Int64? = nil,
        revocationReason: Int64? = nil,
        revocationDate: Int64? = nil,
        isUpgraded: Bool? = nil,
        offerType: Int64? = nil,
        offerIdentifier: String? = nil,
        environment: AppStoreEnvironment? = nil,
        storefront: String? = nil,
        storefrontId: String? = nil,
        transactionReason: String? = nil,
        currency: String? = nil,
        price: Int64? = nil,
        offerDiscountType: String? = nil,
        appTransactionId: String? = nil,
        offerPeriod: String? = nil,
        revocationType: String? = nil,
        revocationPercentage: Int64? = nil
    ) {
        self.originalTransactionId = originalTransactionId
        self.transactionId = transactionId
        self.webOrderLineItemId = webOrderLineItemId
        self.bundleId = bundleId
        self.productId = productId
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expiresDate = expiresDate
        self.quantity = quantity
        self.type = type
        self.appAccountToken = appAccountToken
        self.inAppOwnershipType = inAppOwnershipType
        self.signedDate = signedDate
        self.revocationReason = revocationReason
        self.revocationDate = revocationDate
        self.isUpgraded = isUpgraded
        self.offerType = offerType
        self.offerIdentifier = offerIdentifier
        self.environment = environment
        self.storefront = storefront
        self.storefrontId = storefrontId
        self.transactionReason = transactionReason
        self.currency = currency
        self.price = price
        self.offerDiscountType = offerDiscountType
        self.appTransactionId = appTransactionId
        self.offerPeriod = offerPeriod
        self.revocationType = revocationType
        self.revocationPercentage = revocationPercentage
    }
}

/// `commitmentInfo` of a transaction (Apple's TransactionCommitmentInfo; field names as Apple's library models them).
public struct TransactionCommitmentInfo: Codable, Sendable, Equatable {
    /// This period's number within the commitment, from 1.
    public var billingPeriodNumber: Int?
    /// The commitment's periods (12 for a 12-month commitment of monthly payments).
    public var totalBillingPeriods: Int?
    /// When the commitment ends, milliseconds since 1970.
    public var commitmentExpiresDate: Int64?
    /// The commitment's price, in milliunits of the currency.
    public var commitmentPrice: Int64?

    public init(billingPeriodNumber: Int? = nil, totalBillingPeriods: Int? = nil, commitmentExpiresDate: Int64? = nil, commitmentPrice: Int64? = nil)
    {
        self.billingPeriodNumber = billingPeriodNumber
        self.totalBillingPeriods = totalBillingPeriods
        self.commitmentExpiresDate = commitmentExpiresDate
        self.commitmentPrice = commitmentPrice
    }
}
