import Foundation
import Hummingbird
import Logging
import Metrics
import PostgresNIO
import ReclaimDomain
import ReclaimStore

/// `POST /v1/apple/retention-messaging`: Apple's realtime request from its cancellation sheet ("which offer or
/// message should this subscriber see?"), answered within Apple's deadline (about 700 ms) from what the
/// campaigns already decided: one indexed read and one ES256 signature.
///
/// - The request is verified like a notification (chain to a root trusted for the app its appAppleId names,
///   then the signature): forged or malformed is 401/400 problem+json.
/// - It carries no bundleId: the app is the configured one with its appAppleId that accepts its environment;
///   none matches, the answer is `{}` (Apple then shows its default).
/// - The subscriber's live offer, when its campaign names a `messageIdentifier`, is answered as
///   `{"promotionalOffer": {"messageIdentifier", "promotionalOfferSignatureV2"}}`: a StoreKit 2 promotional
///   offer JWS with `transactionId` = the request's originalTransactionId, as Apple requires, signed now with a
///   new nonce (a stored signature may already have been handed to the app).
/// - Otherwise the app's `defaultMessageIdentifier` as `{"message": {"messageIdentifier"}}`, or `{}`.
struct RetentionMessagingRoutes {
    let verifier: AppleJWSVerifier
    let config: ReclaimConfig
    let postgres: Database
    let signers: [String: OfferSigner]
    let maxBodyBytes: Int
    var now: @Sendable () -> Date = Date.init

    struct Answer: Encodable {
        struct Message: Encodable { let messageIdentifier: String }
        struct PromotionalOffer: Encodable {
            let messageIdentifier: String
            let promotionalOfferSignatureV2: String
        }
        var message: Message?
        var promotionalOffer: PromotionalOffer?
    }

    func register(on router: Router<ReclaimRequestContext>) {
        router.post("/v1/apple/retention-messaging") { request, context -> JSONBody<Answer> in
            let body = try await readJSONBody(request, context: context, limit: maxBodyBytes, record: { _ in })
            guard let envelope = SignedPayloadBody.decode(body.readableBytesView) else {
                throw Problem.badRequest("malformed-body", "the body must be JSON of the form {\"signedPayload\": \"<JWS>\"}")
            }
            let realtime: RealtimeRequest
            do {
                realtime = try await verifier.verifyRealtimeRequest(envelope.signedPayload)
            } catch let error as JWSVerificationError {
                Counter(label: "reclaim_retention_requests_total", dimensions: [("answer", "refused")]).increment()
                throw NotificationIngest.problem(for: error)
            }
            let answer = try await answer(realtime, logger: context.logger)
            let kind = answer.promotionalOffer != nil ? "offer" : answer.message != nil ? "message" : "nothing"
            Counter(label: "reclaim_retention_requests_total", dimensions: [("answer", kind)]).increment()
            return JSONBody(answer)
        }
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
        let subscriber = OfferStore.Subscriber(
            bundleId: app.bundleId,
            environment: environment,
            originalTransactionId: realtime.originalTransactionId
        )
        let offer = try await postgres.withConnection(logger: logger) {
            try await OfferStore.liveOffer(of: subscriber, connection: $0, logger: logger)
        }
        if let offer, let signer = signers[app.bundleId],
            let messageIdentifier = config.campaigns.first(where: { $0.id == offer.campaignId })?.messageIdentifier
        {
            let jws = try signer.storeKit2(
                product: offer.productId,
                offer: offer.offerIdentifier,
                nonce: UUID(),
                issuedAt: Int64(now().timeIntervalSince1970),
                transactionId: realtime.originalTransactionId
            )
            CampaignMetrics().signed(purpose: "retention_messaging")
            return Answer(promotionalOffer: .init(messageIdentifier: messageIdentifier, promotionalOfferSignatureV2: jws))
        }
        return Answer(message: app.defaultMessageIdentifier.map(Answer.Message.init))
    }
}
