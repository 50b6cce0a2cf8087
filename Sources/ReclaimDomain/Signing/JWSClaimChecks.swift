/// Input checks shared by the StoreKit 2 claim types.
enum JWSClaimChecks {
    /// `iat` at or above this is milliseconds, not seconds (10^11 s is the year 5138).
    static let maximumIssuedAt: Int64 = 100_000_000_000

    static func require(issuerId: String, bundleId: String, productId: String, issuedAt: Int64, transactionId: String?) throws(OfferSigningError) {
        guard !issuerId.isEmpty else {
            throw OfferSigningError(.missingIssuerId, field: "iss", "a StoreKit 2 signature needs the App Store Connect issuer id")
        }
        guard !bundleId.isEmpty else {
            throw OfferSigningError(.emptyBundleId, field: "bid", "bundle id must not be empty")
        }
        guard !productId.isEmpty else {
            throw OfferSigningError(.emptyProductIdentifier, field: "productId", "productId must not be empty")
        }
        guard issuedAt >= 0, issuedAt < maximumIssuedAt else {
            throw OfferSigningError(.issuedAtNotSeconds, field: "iat", "iat \(issuedAt) is not UNIX seconds (milliseconds given?)")
        }
        if let transactionId, transactionId.isEmpty {
            throw OfferSigningError(.emptyTransactionId, field: "transactionId", "transactionId is empty; pass nil to omit it")
        }
    }
}
