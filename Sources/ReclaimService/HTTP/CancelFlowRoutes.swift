import Foundation
import HTTPTypes
import Hummingbird
import Metrics
import ReclaimDomain
import ReclaimStore

/// The app's cancel flow (``CancelFlowService``):
/// - `POST /v1/cancel-flow` `{"appAccountToken": UUID | "signedTransaction": JWS, "reason": R | null, "canShow": [...]}`:
///   the subscriber is cancelling; answered with the campaign's answer (`offer`, `message`, `switch` or `none`) and
///   which of Apple's sheets comes next. The subscriber is named as the offer routes name them: by the appAccountToken
///   (with the app's user token where the app requires one) or by a transaction Apple signed (``TransactionProof``).
/// - `POST /v1/cancel-flow/events` `{"flowId": UUID?, "step": S, "error": text?}`: a step of the flow, for the funnel.
struct CancelFlowRoutes {
    let service: CancelFlowService
    let userTokens: [String: UserTokenVerifier]
    let proof: TransactionProof

    static let maxBodyBytes = OfferRoutes.maxLookupBodyBytes
    static let maxEventBodyBytes = 4096

    struct Body: Decodable {
        var appAccountToken: String?
        var signedTransaction: String?
        var reason: String?
        var canShow: [String]?
    }

    struct EventBody: Decodable {
        var flowId: String?
        var step: String
        var error: String?
    }

    /// The answer (docs/http.md, "The cancel flow").
    struct FlowAnswer: Encodable {
        struct Answer: Encodable {
            var kind: String
            var campaign: String?
            var variant: String?
            var message: String?
            var productIdentifier: String?
            var offer: OfferRoutes.DeliveredOffer?
        }
        var flowId: String
        var originalTransactionId: String?
        var reason: String?
        var answer: Answer
        /// `refundRequest` for the survey answer `refund` (Apple's refund request sheet), else `manageSubscriptions`.
        var next: String
    }

    /// Registers on a group behind ``KeyAuthenticator`` `.app`.
    func register(on router: RouterGroup<ReclaimRequestContext>) {
        router.post("/v1/cancel-flow") { request, context -> JSONBody<FlowAnswer> in
            let bundleId = try context.appBundleId()
            let data = try await readJSONBody(request, context: context, limit: Self.maxBodyBytes, record: { _ in })
            let body: Body
            do {
                body = try JSONDecoder().decode(Body.self, from: Data(data.readableBytesView))
            } catch {
                throw Problem(.invalidBody, "send {\"appAccountToken\": UUID} or {\"signedTransaction\": JWS}, with \"reason\" and \"canShow\"")
            }
            let intent = try await intent(body, bundleId: bundleId, request: request)
            let answer = await service.start(intent, logger: context.logger)
            Counter(label: "reclaim_cancel_flows_total", dimensions: [("outcome", answer.decision?.outcome.rawValue ?? "none")]).increment()
            return JSONBody(Self.response(answer), headers: [.cacheControl: "no-store"])
        }

        router.post("/v1/cancel-flow/events") { request, context -> Response in
            let bundleId = try context.appBundleId()
            let data = try await readJSONBody(request, context: context, limit: Self.maxEventBodyBytes, record: { _ in })
            guard let body = try? JSONDecoder().decode(EventBody.self, from: Data(data.readableBytesView)) else {
                throw Problem(.invalidBody, "send {\"flowId\": UUID, \"step\": STEP}")
            }
            guard CancelFlowStore.steps.contains(body.step) else {
                throw Problem(.invalidEvent, "step must be one of \(CancelFlowStore.steps.sorted().joined(separator: ", "))")
            }
            // The database counts characters (char_length): code points, not what Swift counts as one.
            if let error = body.error, error.unicodeScalars.count > 500 || error.contains("\u{0}") {
                throw Problem(.invalidText, "error: at most 500 characters, no NUL")
            }
            if body.flowId == nil, body.step != "survey_skipped" {
                throw Problem(.invalidBody, "flowId is required: only survey_skipped comes before a flow started")
            }
            var flowId: UUID?
            if let text = body.flowId {
                guard let id = OfferRequestInput.uuid(text) else { throw Problem(.notFound, "no such cancel flow") }
                flowId = id
            }
            let recorded = try await CancelFlowStore.recordEvent(
                flowId: flowId,
                bundleId: bundleId,
                step: body.step,
                error: body.step == "purchase_failed" ? body.error : nil,
                postgres: service.postgres,
                logger: context.logger
            )
            guard recorded else { throw Problem(.notFound, "no such cancel flow") }
            Counter(label: "reclaim_cancel_flow_events_total", dimensions: [("step", body.step)]).increment()
            return Response(status: .noContent)
        }
    }

    /// The request as the service takes it: the subscriber proven, the reason one of the app's, what the app can show.
    func intent(_ body: Body, bundleId: String, request: Request) async throws -> CancelFlowService.Intent {
        let reasons = service.reasons[bundleId] ?? ReclaimConfig.App.defaultCancelReasons
        if let reason = body.reason, !reasons.contains(reason) {
            throw Problem(.invalidBody, "reason '\(reason)' is not one of \(reasons.joined(separator: ", ")) (null for no answer)")
        }
        var canShow = Set(CancelFlowAnswerKind.allCases)
        if let kinds = body.canShow {
            canShow = []
            for kind in kinds {
                guard let known = CancelFlowAnswerKind(rawValue: kind) else {
                    throw Problem(.invalidBody, "canShow: '\(kind)' is not offer, message or switch")
                }
                canShow.insert(known)
            }
        }
        let subscriber: CancelFlowService.Subscriber
        switch (body.appAccountToken, body.signedTransaction) {
        case (let token?, nil):
            guard let uuid = OfferRequestInput.uuid(token) else { throw Problem(.invalidBody, "appAccountToken must be a UUID") }
            if let verifier = userTokens[bundleId] {
                // As GET /v1/offers: an app that requires user tokens names its user only with the token its backend made.
                try AppUserAuthenticator.requireUserToken(
                    request,
                    for: uuid,
                    verifier: verifier,
                    missing: "this app requires the X-Reclaim-User-Token its backend made for the appAccountToken"
                )
            }
            subscriber = .appUser(uuid)
        case (nil, let jws?):
            let text: String
            do throws(InvalidInput) {
                text = try OfferRequestInput.signedTransaction(jws, limit: OfferRoutes.maxSignedTransactionBytes)
            } catch {
                throw Problem(.invalidBody, error.reason)
            }
            do throws(TransactionProof.Refused) {
                let proven = try await proof.subscriber(of: text, bundleId: bundleId)
                subscriber = .subscription(proven.subscriber, appAccountToken: proven.appAccountToken, transaction: proven.transaction)
            } catch {
                throw Problem(error)
            }
        default:
            throw Problem(.invalidBody, "name the subscriber by exactly one of appAccountToken and signedTransaction")
        }
        return .init(bundleId: bundleId, subscriber: subscriber, reason: body.reason, canShow: canShow)
    }

    static func response(_ answer: CancelFlowService.Answer) -> FlowAnswer {
        var body = FlowAnswer.Answer(kind: "none")
        if let decision = answer.decision {
            body.campaign = decision.campaign.id
            switch decision.answer {
            case .offer?:
                if let offer = answer.offer {
                    body.kind = "offer"
                    body.offer = OfferRoutes.DeliveredOffer(offer, environment: answer.environment ?? "")
                }
            case .message(let key)?:
                body.kind = "message"
                body.message = key
            case .switchTo(let product, _, _)?:
                body.kind = "switch"
                body.productIdentifier = product
            case nil: break
            }
            if body.kind != "none" { body.variant = decision.variant.flatMap { $0.id.isEmpty ? nil : $0.id } }
        }
        return FlowAnswer(
            flowId: answer.flowId.uuidString.lowercased(),
            originalTransactionId: answer.originalTransactionId,
            reason: answer.reason,
            answer: body,
            next: answer.reason == ReclaimConfig.App.refundReason ? "refundRequest" : "manageSubscriptions"
        )
    }
}
