import Foundation
import Logging
import Metrics
import PostgresNIO
import ReclaimDomain
import ReclaimStore

/// Apple's Retention Messaging realtime request from its cancellation sheet ("which offer or message should this
/// subscriber see?"), answered within Apple's deadline (about 700 ms) from what the campaigns already decided: one
/// indexed read and one ES256 signature.
///
/// - The request is verified like a notification (chain to a root trusted for the app its appAppleId names, then
///   the signature): a refusal is an ``IngestRefusal``.
/// - It carries no bundleId: the app is the configured one with its appAppleId that accepts its environment;
///   none matches, the answer is empty (Apple then shows its default).
/// - The subscriber's live offer, when its grant or its campaign names a `messageIdentifier`, is answered as a promotional
///   offer: a StoreKit 2 promotional offer JWS with `transactionId` = the request's originalTransactionId, as
///   Apple requires, signed now with a new nonce (``OfferIssuer/retentionSignature(for:transactionId:)``: a
///   stored signature may already have been handed to the app).
/// - Otherwise the app's `defaultMessageIdentifier` as a message, or nothing.
public struct RetentionMessaging: Sendable {
    let verifier: AppleJWSVerifier
    let config: ReclaimConfig
    let postgres: Database
    let issuer: OfferIssuer

    /// Apple's answer body: `{"promotionalOffer": {"messageIdentifier", "promotionalOfferSignatureV2"}}`,
    /// `{"message": {"messageIdentifier"}}` or `{}`.
    public struct Answer: Encodable, Sendable {
        public struct Message: Encodable, Sendable { let messageIdentifier: String }
        public struct PromotionalOffer: Encodable, Sendable {
            let messageIdentifier: String
            let promotionalOfferSignatureV2: String
        }
        public var message: Message?
        public var promotionalOffer: PromotionalOffer?

        /// `offer`, `message` or `nothing`: the label of `reclaim_retention_requests_total`.
        var kind: String { promotionalOffer != nil ? "offer" : message != nil ? "message" : "nothing" }
    }

    /// Verifies `signedPayload` and answers it; a refusal when it does not verify.
    func answer(signedPayload: String, logger: Logger) async throws -> Result<Answer, IngestRefusal> {
        let realtime: RealtimeRequest
        do {
            realtime = try await verifier.verifyRealtimeRequest(signedPayload)
        } catch {
            Counter(label: "reclaim_retention_requests_total", dimensions: [("answer", "refused")]).increment()
            return .failure(IngestRefusal(error))
        }
        let answer = try await answer(realtime, logger: logger)
        Counter(label: "reclaim_retention_requests_total", dimensions: [("answer", answer.kind)]).increment()
        return .success(answer)
    }

    func answer(_ realtime: RealtimeRequest, logger: Logger) async throws -> Answer {
        let environment = realtime.environment.rawValue
        guard let app = config.apps.first(where: { $0.appAppleId == realtime.appAppleId && $0.environments.contains(environment) }) else {
            logger.notice(
                "retention request for no configured app",
                metadata: ["appAppleId": "\(realtime.appAppleId)", "environment": "\(environment)"]
            )
            return Answer()
        }
        let subscriber = SubscriberKey(bundleId: app.bundleId, environment: environment, originalTransactionId: realtime.originalTransactionId)
        // A grant names its own message, or takes its campaign label's.
        let live = try await postgres.withConnection(logger: logger) {
            try await OfferStore.liveOfferWithGrantMessage(of: subscriber, connection: $0, logger: logger)
        }
        let offer = live?.offer
        let messageIdentifier =
            live?.grantMessage ?? offer.flatMap { offer in config.campaigns.first { $0.id == offer.campaignId }?.messageIdentifier }
        if let offer, let messageIdentifier, let jws = try issuer.retentionSignature(for: offer, transactionId: realtime.originalTransactionId) {
            return Answer(promotionalOffer: .init(messageIdentifier: messageIdentifier, promotionalOfferSignatureV2: jws))
        }
        return Answer(message: app.defaultMessageIdentifier.map(Answer.Message.init))
    }
}
