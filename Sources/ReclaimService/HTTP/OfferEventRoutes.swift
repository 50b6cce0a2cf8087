import Foundation
import Hummingbird
import Metrics
import ReclaimDomain
import ReclaimStore

/// `POST /v1/offers/{id}/events` with `{"event": E}`, E one of shown, dismissed, purchase_started, purchase_pending
/// (StoreKit's `.pending`: Ask to Buy) and purchase_failed, which may carry `"error"`: what StoreKit threw, at most 256
/// characters. What the app did with an offer, for the funnel (`reclaim.offer_events`). Idempotent: the same event
/// again answers `{"status":"duplicate"}` (a second failure keeps the first error). Another app's offer is 404, like an
/// unknown one, so ids reveal nothing.
struct OfferEventRoutes {
    let delivery: OfferDelivery

    /// An event body is a few dozen bytes; purchase_failed's error is 256 characters, up to 6 bytes each as a JSON escape.
    static let maxBodyBytes = 4096

    struct Answer: Encodable { let status: String }

    /// Registers on a group behind ``KeyAuthenticator`` `.app`.
    func register(on router: RouterGroup<ReclaimRequestContext>) {
        router.post("/v1/offers/{id}/events") { request, context -> JSONBody<Answer> in
            let bundleId = try context.appBundleId()
            guard let text = context.parameters.get("id"), let offerId = OfferRequestInput.uuid(text) else {
                throw Problem(.notFound, "no such offer")
            }
            let body = try await readJSONBody(request, context: context, limit: Self.maxBodyBytes, record: { _ in })
            let event: OfferRequestInput.EventBody
            do throws(OfferRequestInput.EventRefusal) {
                event = try OfferRequestInput.event(body: Data(body.readableBytesView))
            } catch {
                throw Problem(error.nul ? .invalidText : .invalidEvent, error.reason)
            }
            let outcome = try await delivery.recordEvent(event, offerId: offerId, bundleId: bundleId, logger: context.logger)
            switch outcome {
            case .unknownOffer: throw Problem(.notFound, "no such offer")
            case .recorded:
                // Purchases that fail in the app are otherwise only a row (ReclaimPurchasesFailing reads this).
                Counter(label: "reclaim_offer_events_total", dimensions: [("event", event.event)]).increment()
                return JSONBody(Answer(status: outcome.rawValue))
            case .duplicate: return JSONBody(Answer(status: outcome.rawValue))
            }
        }
    }
}
