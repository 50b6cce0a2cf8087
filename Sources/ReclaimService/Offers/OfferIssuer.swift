import Foundation
import Logging
import PostgresNIO
import ReclaimDomain
import ReclaimStore

/// The one place an offer is signed: issued by a campaign or a grant, re-signed for a delivery or by the
/// refresher, signed for a Retention Messaging answer. Each signature is counted here
/// (`reclaim_offer_signatures_total{purpose}`), each issue and withdrawal too, so no caller can sign or supersede
/// without the metrics and rules that go with it.
///
/// Apple's rules it applies: "The timestamp keeps the offer active for 24 hours" (App Store Server Library,
/// `PromotionalOfferSignatureCreator.createSignature`) and the nonce is "A one-time UUID value that your server
/// generates. Generate a new nonce for each signature." (StoreKit, `Product.SubscriptionOffer.Signature`), so a
/// signature handed to an app is never handed out again (``SignaturePolicy``); a subscriber has at most one live
/// offer (the database's unique index), so a new one supersedes the old one first.
public struct OfferIssuer: Sendable {
    /// By bundle id.
    public let signers: [String: OfferSigner]
    public let policy: SignaturePolicy
    let now: @Sendable () -> Date
    let metrics = CampaignMetrics()

    public init(signers: [String: OfferSigner], policy: SignaturePolicy = SignaturePolicy(), now: @escaping @Sendable () -> Date = Date.init) {
        self.signers = signers
        self.policy = policy
        self.now = now
    }

    /// What a campaign's decision or a grant issues to one subscriber.
    public struct Issue: Sendable {
        public var subscriber: SubscriptionState
        /// The campaign's id, or the grant's `campaign` label.
        public var campaignId: String
        public var productId: String
        public var offerIdentifier: String
        public var priority: Int
        public var deliverableUntil: Date
        public var decisionId: UUID?
        public var grantId: UUID?
        /// The cancel-flow decision, for an offer answered to the app's cancel flow.
        public var cancelFlowDecisionId: UUID? = nil
        /// The campaign variant, when the campaign has variants.
        public var variantId: String? = nil
    }

    /// The new offer, signed both ways for `issue.subscriber`, counted as issued. `purpose` names the signature
    /// in the metrics (`issue` for campaigns, `grant`).
    public func issue(_ issue: Issue, purpose: String) throws -> NewOffer {
        let bundleId = issue.subscriber.bundleId
        guard let signer = signers[bundleId] else { throw NoSigningKey(bundleId: bundleId) }
        let signed = try signer.signOffer(
            product: issue.productId,
            offer: issue.offerIdentifier,
            appAccountToken: issue.subscriber.appAccountToken,
            transactionId: issue.subscriber.originalTransactionId,
            nonce: UUID(),
            now: now()
        )
        metrics.signed(purpose: purpose)
        metrics.issued(campaign: issue.campaignId)
        return NewOffer(
            decisionId: issue.decisionId,
            grantId: issue.grantId,
            campaignId: issue.campaignId,
            priority: issue.priority,
            productId: issue.productId,
            offerIdentifier: issue.offerIdentifier,
            signed: signed,
            deliverableUntil: issue.deliverableUntil,
            variantId: issue.variantId,
            cancelFlowDecisionId: issue.cancelFlowDecisionId
        )
    }

    /// Ends a live offer (superseded by a new one, or withdrawn by the subscriber's lifecycle), counted.
    public func withdraw(_ offerId: UUID, reason: String, connection: PostgresConnection, logger: Logger) async throws {
        try await withdraw([(offerId, reason)], connection: connection, logger: logger)
    }

    /// ``withdraw(_:reason:connection:logger:)`` for a whole batch: one statement.
    public func withdraw(_ withdrawals: [(offerId: UUID, reason: String)], connection: PostgresConnection, logger: Logger) async throws {
        guard !withdrawals.isEmpty else { return }
        try await OfferStore.withdraw(withdrawals, connection: connection, logger: logger)
        for _ in withdrawals { metrics.withdrawn() }
    }

    /// Signs `offer` anew (a new nonce) when ``SignaturePolicy`` forbids handing out its stored signatures;
    /// false when it kept them. nil signer (the app left the config): nothing is signed, the caller skips it.
    public func signForDelivery(_ offer: inout StoredOffer) throws -> Bool? {
        guard let signer = signers[offer.bundleId] else { return nil }
        let time = now()
        guard policy.mustResignBeforeHandingOut(offer, currentKeyId: signer.key.keyId, now: time) else { return false }
        offer.replaceSignatures(with: try signer.resign(offer, now: time))
        metrics.signed(purpose: "delivery")
        return true
    }

    /// Signs `offer` anew for the refresher, which found it older than ``SignaturePolicy/refreshCutoff(now:)``;
    /// false when its app has no signer any more (left to expire).
    public func refresh(_ offer: inout StoredOffer) throws -> Bool {
        guard let signer = signers[offer.bundleId] else { return false }
        offer.replaceSignatures(with: try signer.resign(offer, now: now()))
        metrics.signed(purpose: "refresh")
        return true
    }

    /// A StoreKit 2 promotional offer JWS for `offer`, signed now with a new nonce, bound to `transactionId`
    /// (Retention Messaging requires the request's originalTransactionId); nil when its app has no signer.
    public func retentionSignature(for offer: StoredOffer, transactionId: String) throws -> String? {
        guard let signer = signers[offer.bundleId] else { return nil }
        let jws = try signer.storeKit2(
            product: offer.productId,
            offer: offer.offerIdentifier,
            nonce: UUID(),
            issuedAt: Int64(now().timeIntervalSince1970),
            transactionId: transactionId
        )
        metrics.signed(purpose: "retention_messaging")
        return jws
    }

    /// A cancel-sheet campaign's promotional offer, signed now with a new nonce, in the format its config asks for;
    /// nil when the app has no signer. V2 is bound to `transactionId`: Apple, of `promotionalOfferSignatureV2`, "The
    /// `transactionId` parameter of the signature is required. Use the originalTransactionId you receive in
    /// DecodedRealtimeRequestBody." V1 signs the subscriber's appAccountToken (lowercase), or the empty string when
    /// none is known, as `applicationUsername`, and names it as `appAccountToken` beside the signature.
    public func cancelSheetSignature(
        bundleId: String,
        productId: String,
        offerIdentifier: String,
        format: CancelSheetAnswer.OfferSignatureFormat,
        transactionId: String,
        appAccountToken: UUID?
    ) throws -> CancelSheetSignature? {
        guard let signer = signers[bundleId] else { return nil }
        let signature: CancelSheetSignature
        switch format {
        case .v2:
            signature = .v2(
                try signer.storeKit2(
                    product: productId,
                    offer: offerIdentifier,
                    nonce: UUID(),
                    issuedAt: Int64(now().timeIntervalSince1970),
                    transactionId: transactionId
                )
            )
        case .v1:
            signature = .v1(
                try signer.storeKit1(
                    product: productId,
                    offer: offerIdentifier,
                    applicationUsername: appAccountToken?.uuidString.lowercased() ?? "",
                    nonce: UUID(),
                    now: now()
                )
            )
        }
        metrics.signed(purpose: "retention_messaging")
        return signature
    }

    /// The time the refresher compares stored signatures with.
    func refreshCutoff() -> Date { policy.refreshCutoff(now: now()) }
}

/// A cancel-sheet promotional offer's signature: Apple's `promotionalOfferSignatureV2` (a compact JWS) or the
/// values of `promotionalOfferSignatureV1`.
public enum CancelSheetSignature: Sendable {
    case v2(String)
    case v1(StoreKit1OfferSignature)
}

/// When a stored signature may still be handed out, and when the refresher re-makes it: the one re-signing
/// policy of delivery and the refresher.
public struct SignaturePolicy: Sendable {
    /// A delivery hands out a stored signature only if it is younger than this (the app may keep an offer a while
    /// before use, and Apple accepts a signature for 24 hours).
    public var freshFor: TimeInterval
    /// The refresher re-signs live offers whose signatures are older than this (config `offers.resignAfter`).
    public var resignAfter: TimeInterval

    public init(freshFor: TimeInterval = 3600, resignAfter: TimeInterval = 12 * 3600) {
        self.freshFor = freshFor
        self.resignAfter = resignAfter
    }

    /// Whether a delivery must sign `offer` anew: its signature was handed out already (Apple accepts a nonce
    /// once), is older than ``freshFor``, or was made by another key than the app's current one (after a
    /// rotation nothing signed by the previous key is handed out).
    public func mustResignBeforeHandingOut(_ offer: StoredOffer, currentKeyId: String, now: Date) -> Bool {
        offer.signatureDelivered || offer.signedAt < now.addingTimeInterval(-freshFor) || offer.keyId != currentKeyId
    }

    /// Live offers signed before this are due for the refresher.
    public func refreshCutoff(now: Date) -> Date { now.addingTimeInterval(-resignAfter) }
}

extension OfferSigner {
    /// New signatures for a stored offer, with a new nonce, for the same subscriber.
    func resign(_ offer: StoredOffer, now: Date) throws(OfferSigningError) -> SignedOffer {
        try signOffer(
            product: offer.productId,
            offer: offer.offerIdentifier,
            appAccountToken: offer.appAccountToken,
            transactionId: offer.originalTransactionId,
            nonce: UUID(),
            now: now
        )
    }
}
