import Hummingbird
import ReclaimDomain

/// `POST /v1/apple/retention-messaging`: Apple's realtime request, answered by ``RetentionMessaging``. Forged or
/// malformed is 401/400 problem+json.
struct RetentionMessagingRoutes {
    let retention: RetentionMessaging
    let maxBodyBytes: Int

    func register(on router: Router<ReclaimRequestContext>) {
        router.post("/v1/apple/retention-messaging") { request, context -> JSONBody<RealtimeAnswer> in
            // The budget counts from here: Apple's request is small, so reading it is a sliver of it.
            let arrival = ContinuousClock.now
            let body = try await readJSONBody(request, context: context, limit: maxBodyBytes, record: { _ in })
            guard let envelope = SignedPayloadBody.decode(body.readableBytesView) else {
                throw Problem(.malformedBody, "the body must be JSON of the form {\"signedPayload\": \"<JWS>\"}")
            }
            switch await retention.answer(signedPayload: envelope.signedPayload, arrivedAt: arrival, logger: context.logger) {
            case .success(let answer): return JSONBody(answer)
            case .failure(let refusal): throw Problem(refusal)
            }
        }
    }
}
