import Foundation
import ReclaimDomain

/// Apple's `RealtimeResponseBody`: "A response you provide to choose, in real time, a retention message the system
/// displays to the customer." At most one key is set (Apple: "you can choose from mutually exclusive options"); none
/// is `{}`. `advancedCommerceInfo` (Retention Messaging 1.2) needs the Advanced Commerce API and is never sent.
public struct RealtimeAnswer: Encodable, Sendable, Equatable {
    /// `message`: `{"messageIdentifier"}`.
    public struct Message: Encodable, Sendable, Equatable { let messageIdentifier: String }

    /// `alternateProduct`: `{"messageIdentifier", "productId", "billingPlanType"?}` ("A switch-plan message and
    /// product ID"; `billingPlanType` since Retention Messaging 1.5).
    public struct AlternateProduct: Encodable, Sendable, Equatable {
        let messageIdentifier: String
        let productId: String
        let billingPlanType: String?
    }

    /// `promotionalOffer`: `{"messageIdentifier", "promotionalOfferSignatureV2"}` or `{"messageIdentifier",
    /// "promotionalOfferSignatureV1": {"encodedSignature", "productId", "nonce", "timestamp", "keyId",
    /// "offerIdentifier", "appAccountToken"?}}` (Apple's `promotionalOfferSignatureV1` object).
    public struct PromotionalOffer: Encodable, Sendable, Equatable {
        let messageIdentifier: String
        let promotionalOfferSignatureV2: String?
        let promotionalOfferSignatureV1: SignatureV1?

        struct SignatureV1: Encodable, Sendable, Equatable {
            let encodedSignature: String
            let productId: String
            let nonce: String
            /// UNIX milliseconds.
            let timestamp: Int64
            let keyId: String
            let offerIdentifier: String
            /// Lowercase; absent when the signature signed the empty string.
            let appAccountToken: String?
        }

        init(messageIdentifier: String, signature: CancelSheetSignature, productId: String, offerIdentifier: String) {
            self.messageIdentifier = messageIdentifier
            switch signature {
            case .v2(let jws):
                promotionalOfferSignatureV2 = jws
                promotionalOfferSignatureV1 = nil
            case .v1(let signed):
                promotionalOfferSignatureV2 = nil
                promotionalOfferSignatureV1 = SignatureV1(
                    encodedSignature: signed.signature,
                    productId: productId,
                    nonce: signed.nonce,
                    timestamp: signed.timestamp,
                    keyId: signed.keyIdentifier,
                    offerIdentifier: offerIdentifier,
                    appAccountToken: signed.applicationUsername.isEmpty ? nil : signed.applicationUsername
                )
            }
        }
    }

    public var message: Message?
    public var alternateProduct: AlternateProduct?
    public var promotionalOffer: PromotionalOffer?

    init(message: Message? = nil, alternateProduct: AlternateProduct? = nil, promotionalOffer: PromotionalOffer? = nil) {
        self.message = message
        self.alternateProduct = alternateProduct
        self.promotionalOffer = promotionalOffer
    }

    /// `offer`, `switch`, `message` or `nothing`: the label of `reclaim_retention_requests_total`.
    var kind: String {
        promotionalOffer != nil ? "offer" : alternateProduct != nil ? "switch" : message != nil ? "message" : "nothing"
    }
}
