import Foundation
import HTTPTypes
import Hummingbird
import ReclaimDomain
import ReclaimStore

/// `POST /v1/grants` (admin key, `Idempotency-Key` header): a referral or incentive offer for one subscriber,
/// granted by ``GrantService``.
///
/// The subscriber is named by `originalTransactionId` or `appAccountToken` (optionally `environment`); one who
/// never had a subscription in the app is 422 `not-eligible`, and nothing is stored. 201 with the grant and its
/// offer; the same Idempotency-Key again returns the first result (200); with a different body it is 422
/// `idempotency-key-reused`.
struct GrantRoutes {
    let grants: GrantService

    static let maxBodyBytes = 8 * 1024
    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!

    struct Answer: Encodable {
        struct Grant: Encodable {
            let id: String
            let bundleId: String
            let campaign: String
            let reason: String
            let messageIdentifier: String?
        }
        struct Offer: Encodable {
            let id: String
            let originalTransactionId: String
            let environment: String
            let productIdentifier: String
            let offerIdentifier: String
            let expiresAt: String
        }
        let grant: Grant
        let offer: Offer?
    }

    /// Registers on a group behind ``KeyAuthenticator`` `.admin`.
    func register(on router: RouterGroup<ReclaimRequestContext>) {
        router.post("/v1/grants") { request, context -> Response in
            let adminKeyId = try context.adminKeyId()
            guard let key = request.headers[Self.idempotencyKey], GrantRequest.isValidIdempotencyKey(key) else {
                throw Problem(.missingIdempotencyKey, "send an Idempotency-Key header: 1 to 200 visible ASCII characters")
            }
            let body = try await readJSONBody(request, context: context, limit: Self.maxBodyBytes, record: { _ in })
            let grant: GrantRequest
            do throws(InvalidInput) {
                grant = try GrantRequest(body: Data(body.readableBytesView))
            } catch {
                throw Problem(.invalidGrant, error.reason)
            }
            switch try await grants.grant(grant, key: key, adminKeyId: adminKeyId, logger: context.logger) {
            case .created(let stored): return try JSONBody(Self.answer(stored), status: .created).response(from: request, context: context)
            case .existing(let stored):
                guard stored.isSameRequest(as: grant) else { throw Problem.idempotencyKeyReused }
                return try JSONBody(Self.answer(stored)).response(from: request, context: context)
            case .notEligible(let reason): throw Problem(.notEligible, reason)
            case .overBudget(let reason): throw Problem(.discountBudgetSpent, reason + "; overrideDiscountBudget: true grants all the same")
            case .unknownApp: throw Problem.appWithoutSigningKey(grant.bundleId)
            }
        }
    }

    private static func answer(_ stored: StoredGrant) -> Answer {
        Answer(
            grant: .init(
                id: stored.id.uuidString.lowercased(),
                bundleId: stored.request.bundleId,
                campaign: stored.request.campaign,
                reason: stored.request.reason,
                messageIdentifier: stored.request.messageIdentifier
            ),
            offer: stored.offerId.map { offerId in
                .init(
                    id: offerId.uuidString.lowercased(),
                    originalTransactionId: stored.originalTransactionId ?? "",
                    environment: stored.environment ?? "",
                    productIdentifier: stored.request.productId,
                    offerIdentifier: stored.request.offerIdentifier,
                    expiresAt: (stored.deliverableUntil ?? stored.createdAt).formatted(.iso8601)
                )
            }
        )
    }
}
