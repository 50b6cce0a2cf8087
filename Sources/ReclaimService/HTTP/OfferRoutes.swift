import Foundation
import HTTPTypes
import Hummingbird
import ReclaimDomain
import ReclaimStore

/// `GET /v1/offers?appAccountToken=UUID`: the subscriber's deliverable offers, for the app key's app only,
/// each with fresh signatures that no earlier answer carried. `Cache-Control: no-store`: every answer has new
/// nonces and must not be replayed by a cache.
struct OfferRoutes {
    let delivery: OfferDelivery
    /// Apps that require a user token, by bundle id.
    let userTokens: [String: UserTokenVerifier]

    static let userTokenHeader = HTTPField.Name("X-Reclaim-User-Token")!

    /// The answer's shape (see README, HTTP).
    struct OffersResponse: Encodable {
        let appAccountToken: String
        let offers: [DeliveredOffer]
    }

    struct DeliveredOffer: Encodable {
        struct StoreKit2: Encodable { let compactJWS: String }
        let id: String
        let campaign: String
        let environment: String
        let productIdentifier: String
        let offerIdentifier: String
        let storeKit1: StoreKit1OfferSignature
        let storeKit2: StoreKit2
        let expiresAt: String

        init(_ offer: StoredOffer) {
            id = offer.id.uuidString.lowercased()
            campaign = offer.campaignId
            environment = offer.environment
            productIdentifier = offer.productId
            offerIdentifier = offer.offerIdentifier
            storeKit1 = offer.storeKit1
            storeKit2 = StoreKit2(compactJWS: offer.storeKit2JWS)
            expiresAt = offer.deliverableUntil.formatted(.iso8601)
        }
    }

    /// Registers on a group behind ``KeyAuthenticator`` `.app`.
    func register(on router: RouterGroup<ReclaimRequestContext>) {
        router.get("/v1/offers") { request, context -> JSONBody<OffersResponse> in
            let bundleId = try context.appBundleId()
            guard let text = request.uri.queryParameters["appAccountToken"] else {
                throw Problem.badRequest("missing-parameter", "appAccountToken is required: the UUID the app sets on its purchases")
            }
            guard let token = OfferRequestInput.uuid(text) else {
                throw Problem.badRequest("invalid-parameter", "appAccountToken must be a UUID such as 6f1d2c3b-0000-4000-8000-000000000051")
            }
            if let verifier = userTokens[bundleId] {
                guard let userToken = request.headers[Self.userTokenHeader], userToken.utf8.count <= 200 else {
                    throw Problem(
                        .unauthorized,
                        "invalid-user-token",
                        title: "Unauthorized",
                        detail: "this app requires an X-Reclaim-User-Token from its backend"
                    )
                }
                if let problem = verifier.problem(with: userToken, appAccountToken: token, now: Date()) {
                    throw Problem(.unauthorized, "invalid-user-token", title: "Unauthorized", detail: problem)
                }
            }
            let offers = try await delivery.deliver(bundleId: bundleId, appAccountToken: token, logger: context.logger)
            return JSONBody(
                OffersResponse(appAccountToken: token.uuidString.lowercased(), offers: offers.map(DeliveredOffer.init)),
                headers: [.cacheControl: "no-store"]
            )
        }
    }
}
