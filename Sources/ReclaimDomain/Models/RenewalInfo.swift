/// A decoded `signedRenewalInfo` (JWSRenewalInfoDecodedPayload). Every field is optional, as in Apple's spec.
public struct RenewalInfo: Codable, Sendable, Equatable {
    /// 1 customer cancelled, 2 billing error, 3 declined price increase, 4 product not available, 5 other.
    public var expirationIntent: Int64?
    public var originalTransactionId: String?
    public var autoRenewProductId: String?
    public var productId: String?
    /// 0 off, 1 on.
    public var autoRenewStatus: Int64?
    public var isInBillingRetryPeriod: Bool?
    /// 0 not responded, 1 consented or notified.
    public var priceIncreaseStatus: Int64?
    /// UNIX milliseconds, like every date here.
    public var gracePeriodExpiresDate: Int64?
    /// 1 introductory, 2 promotional, 3 offer code, 4 win-back.
    public var offerType: Int64?
    public var offerIdentifier: String?
    public var signedDate: Int64?
    public var environment: AppStoreEnvironment?
    public var recentSubscriptionStartDate: Int64?
    public var renewalDate: Int64?
    public var currency: String?
    /// Milli-units of `currency`.
    public var renewalPrice: Int64?
    public var offerDiscountType: String?
    /// Best first.
    public var eligibleWinBackOfferIds: [String]?
    public var appAccountToken: String?
    public var appTransactionId: String?
    /// The plan the subscription renews to: "MONTHLY" or "BILLED_UPFRONT" (an unknown value kept as it is).
    public var renewalBillingPlanType: String?
    /// The commitment's own renewal (`RenewalCommitmentInfo`): whether the commitment renews at its end, where
    /// `autoRenewStatus` keeps describing the next monthly payment.
    public var commitmentInfo: RenewalCommitmentInfo?
    /// ISO 8601 duration.
    public var offerPeriod: String?

    public init(
        expirationIntent: Int64? = nil,
        originalTransactionId: String? = nil,
        autoRenewProductId: String? = nil,
        productId: String? = nil,
        autoRenewStatus: Int64? = nil,
        isInBillingRetryPeriod: Bool? = nil,
        priceIncreaseStatus: Int64? = nil,
        gracePeriodExpiresDate: Int64? = nil,
        offerType: Int64? = nil,
        offerIdentifier: String? = nil,
        signedDate: Int64? = nil,
        environment: AppStoreEnvironment? = nil,
        recentSubscriptionStartDate: Int64? = nil,
        renewalDate: Int64? = nil,
        currency: String? = nil,
        renewalPrice: Int64? = nil,
        offerDiscountType: String? = nil,
        eligibleWinBackOfferIds: [String]? = nil,
        appAccountToken: String? = nil,
        appTransactionId: String? = nil,
        offerPeriod: String? = nil
    ) {
        self.expirationIntent = expirationIntent
        self.originalTransactionId = originalTransactionId
        self.autoRenewProductId = autoRenewProductId
        self.productId = productId
        self.autoRenewStatus = autoRenewStatus
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.priceIncreaseStatus = priceIncreaseStatus
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.offerType = offerType
        self.offerIdentifier = offerIdentifier
        self.signedDate = signedDate
        self.environment = environment
        self.recentSubscriptionStartDate = recentSubscriptionStartDate
        self.renewalDate = renewalDate
        self.currency = currency
        self.renewalPrice = renewalPrice
        self.offerDiscountType = offerDiscountType
        self.eligibleWinBackOfferIds = eligibleWinBackOfferIds
        self.appAccountToken = appAccountToken
        self.appTransactionId = appTransactionId
        self.offerPeriod = offerPeriod
    }
}

/// `commitmentInfo` of a renewal info (Apple's RenewalCommitmentInfo; field names as Apple's library models them).
public struct RenewalCommitmentInfo: Codable, Sendable, Equatable {
    /// 1: the commitment renews at its end; 0: it does not (the customer cancelled; payments continue until the end).
    public var commitmentAutoRenewStatus: Int?
    public var commitmentAutoRenewProductId: String?
    public var commitmentRenewalBillingPlanType: String?
    /// Milliseconds since 1970.
    public var commitmentRenewalDate: Int64?
    public var commitmentRenewalPrice: Int64?

    public init(
        commitmentAutoRenewStatus: Int? = nil,
        commitmentAutoRenewProductId: String? = nil,
        commitmentRenewalBillingPlanType: String? = nil,
        commitmentRenewalDate: Int64? = nil,
        commitmentRenewalPrice: Int64? = nil
    ) {
        self.commitmentAutoRenewStatus = commitmentAutoRenewStatus
        self.commitmentAutoRenewProductId = commitmentAutoRenewProductId
        self.commitmentRenewalBillingPlanType = commitmentRenewalBillingPlanType
        self.commitmentRenewalDate = commitmentRenewalDate
        self.commitmentRenewalPrice = commitmentRenewalPrice
    }
}
