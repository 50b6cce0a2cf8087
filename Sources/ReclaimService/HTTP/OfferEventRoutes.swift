import Foundation
import Hummingbird
import ReclaimDomain
import ReclaimStore

/// `POST /v1/offers/{id}/events` with `{"event": "shown" | "dismissed" | "purchase_started"}`: what the app did
/// with an offer, for the funnel (`reclaim.offer_events`). Idempotent: the same event again answers
/// `{"status":"duplicate"}`. Another app's offer is 404, like an unknown one, so ids reveal nothing.
struct OfferEventRoutes {
    let delivery: OfferDelivery

    /// An event body is a few dozen bytes.
    static let maxBodyBytes = 1024

    struct Answer: Encodable { let status: String }

    /// Registers on a group behind ``KeyAuthenticator`` `.app`.
    func register(on router: RouterGroup<ReclaimRequestContext>) {
        router.post("/v1/offers/{id}/events") { request, context -> JSONBody<Answer> in
            let bundleId = try context.appBundleId()
            guard let text = context.parameters.get("id"), let offerId = OfferRequestInput.uuid(text) else {
                throw Problem(.notFound, "no such offer")
            }
            let body = try await readJSONBody(request, context: context, limit: Self.maxBodyBytes, record: { _ in })
            guard let event = OfferRequestInput.event(body: Data(body.readableBytesView)) else {
                throw Problem(.invalidEvent, "the body must be {\"event\": \"shown\"}, \"dismissed\" or \"purchase_started\"")
            }
            let outcome = try await delivery.recordEvent(event, offerId: offerId, bundleId: bundleId, logger: context.logger)
            switch outcome {
            case .unknownOffer: throw Problem(.notFound, "no such offer")
            case .recorded, .duplicate: return JSONBody(Answer(status: outcome.rawValue))
            }
        }
    }
}
