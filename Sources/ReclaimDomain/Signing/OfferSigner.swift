import Foundation

/// What the CLI and the workers call to sign offers for one app with one subscription key.
///
/// Time and nonces come from the caller, so a caller with a fixed clock and nonce gets a fixed payload.
public struct OfferSigner: Sendable {
    /// The subscription key that signs.
    public let key: SigningKey
    /// The app's bundle id.
    public let bundleId: String
    /// App Store Connect issuer id; StoreKit 2 signatures need it, StoreKit 1 signatures do not.
    public let issuerId: String?

    public init(key: SigningKey, bundleId: String, issuerId: String?) {
        self.key = key
        self.bundleId = bundleId
        self.issuerId = issuerId
    }

    /// The StoreKit 1 request these inputs make, for callers that want the payload or to verify.
    public func storeKit1Request(product: String, offer: String, applicationUsername: String, nonce: UUID, timestamp: Int64) -> OfferSignatureRequest
    {
        OfferSignatureRequest(
            appBundleId: bundleId,
            keyIdentifier: key.keyId,
            productIdentifier: product,
            offerIdentifier: offer,
            applicationUsername: applicationUsername,
            nonce: nonce,
            timestamp: timestamp
        )
    }

    /// A StoreKit 1 signature (`SKPaymentDiscount`). `timestamp` is UNIX milliseconds.
    public func storeKit1(
        product: String,
        offer: String,
        applicationUsername: String,
        nonce: UUID,
        timestamp: Int64
    ) throws(OfferSigningError) -> StoreKit1OfferSignature {
        try StoreKit1OfferSigner.sign(
            storeKit1Request(product: product, offer: offer, applicationUsername: applicationUsername, nonce: nonce, timestamp: timestamp),
            with: key
        )
    }

    /// A StoreKit 1 signature at `now`, read by the caller from its clock.
    public func storeKit1(
        product: String,
        offer: String,
        applicationUsername: String,
        nonce: UUID,
        now: Date
    ) throws(OfferSigningError) -> StoreKit1OfferSignature {
        try storeKit1(
            product: product,
            offer: offer,
            applicationUsername: applicationUsername,
            nonce: nonce,
            timestamp: OfferSignatureRequest.milliseconds(since1970: now)
        )
    }

    /// Whether a StoreKit 1 signature is valid for this app, this key and the given product and offer.
    /// Apple advises this check before handing a signature to the app.
    public func verify(_ signature: StoreKit1OfferSignature, product: String, offer: String) -> Bool {
        guard let nonce = UUID(uuidString: signature.nonce) else { return false }
        let request = storeKit1Request(
            product: product,
            offer: offer,
            applicationUsername: signature.applicationUsername,
            nonce: nonce,
            timestamp: signature.timestamp
        )
        return StoreKit1OfferSigner.verify(signature, for: request, publicKey: key.publicKey)
    }

    /// A StoreKit 2 promotional offer compact JWS. `issuedAt` is UNIX seconds.
    public func storeKit2(product: String, offer: String, nonce: UUID, issuedAt: Int64, transactionId: String?) throws(OfferSigningError) -> String {
        let claims = try PromotionalOfferClaims(
            issuerId: issuerId ?? "",
            bundleId: bundleId,
            productId: product,
            offerIdentifier: offer,
            nonce: nonce,
            issuedAt: issuedAt,
            transactionId: transactionId
        )
        return try CompactJWSSigner.sign(claims, with: key)
    }
}
