import Foundation
import HTTPTypes
import Hummingbird
import Logging
import PostgresNIO
import ReclaimDomain
import ReclaimStore

/// `POST /v1/grants` (admin key, `Idempotency-Key` header): a referral or incentive offer for one subscriber.
///
/// The subscriber is named by `originalTransactionId` or `appAccountToken` (optionally `environment`) and must
/// have or have had a subscription in the app, as Apple requires (else 422 `not-eligible`, and nothing is
/// stored). The grant becomes an offer in the same table as the campaigns' and replaces the subscriber's live
/// offer (Apple allows one at a time); campaigns never supersede it. The same Idempotency-Key again returns the
/// first result (200); with a different body it is 422 `idempotency-key-reused`.
struct GrantRoutes {
    let postgres: Database
    let config: ReclaimConfig
    let signers: [String: OfferSigner]
    let authentication: KeyAuthentication
    var now: @Sendable () -> Date = Date.init

    /// A grant ranks above every campaign: a campaign's decision never withdraws it.
    static let priority = Int(Int32.max)
    static let maxBodyBytes = 8 * 1024
    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!

    struct Answer: Encodable {
        struct Grant: Encodable {
            let id: String
            let bundleId: String
            let campaign: String
            let reason: String
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

    private enum Outcome {
        case created(StoredGrant)
        case existing(StoredGrant)
        case notEligible(String)
    }

    /// A concurrent request with the same key committed first: run again, and find its grant.
    private struct LostRace: Error {}

    func register(on router: Router<ReclaimRequestContext>) {
        router.post("/v1/grants") { request, context -> Response in
            let adminKeyId = try await authentication.adminKeyId(of: request, context: context)
            guard let key = request.headers[Self.idempotencyKey], GrantRequest.isValidIdempotencyKey(key) else {
                throw Problem.badRequest("missing-idempotency-key", "send an Idempotency-Key header: 1 to 200 visible ASCII characters")
            }
            let body = try await readJSONBody(request, context: context, limit: Self.maxBodyBytes, record: { _ in })
            let grant: GrantRequest
            do throws(InvalidInput) {
                grant = try GrantRequest(body: Data(body.readableBytesView))
            } catch {
                throw Problem.badRequest("invalid-grant", error.reason)
            }
            guard let signer = signers[grant.bundleId] else {
                throw Problem(
                    .unprocessableContent,
                    "unknown-app",
                    title: "Unknown app",
                    detail: "app \(grant.bundleId) is not configured with a signing key"
                )
            }
            var outcome: Outcome?
            for _ in 0..<2 where outcome == nil {
                do {
                    outcome = try await postgres.transaction(logger: context.logger) { connection in
                        try await grantOffer(
                            grant,
                            key: key,
                            adminKeyId: adminKeyId,
                            signer: signer,
                            connection: connection,
                            logger: context.logger
                        )
                    }
                } catch is LostRace {
                    continue
                }
            }
            switch outcome {
            case .created(let stored)?: return try JSONBody(Self.answer(stored), status: .created).response(from: request, context: context)
            case .existing(let stored)?:
                guard stored.isSameRequest(as: grant) else {
                    throw Problem(
                        .unprocessableContent,
                        "idempotency-key-reused",
                        title: "Idempotency key reused",
                        detail: "this Idempotency-Key was used for a different grant; use a new key for a new grant"
                    )
                }
                return try JSONBody(Self.answer(stored)).response(from: request, context: context)
            case .notEligible(let reason)?:
                throw Problem(.unprocessableContent, "not-eligible", title: "Not eligible", detail: reason)
            case nil:
                throw Problem.databaseUnavailable()
            }
        }
    }

    private func grantOffer(
        _ grant: GrantRequest,
        key: String,
        adminKeyId: UUID,
        signer: OfferSigner,
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> Outcome {
        if let existing = try await GrantStore.existing(bundleId: grant.bundleId, idempotencyKey: key, connection: connection, logger: logger) {
            return .existing(existing)
        }
        guard let state = try await GrantStore.lockSubscription(for: grant, connection: connection, logger: logger),
            state.hasOrHadSubscription
        else {
            return .notEligible(
                "no subscription of \(grant.bundleId) is known for this subscriber; Apple offers promotional offers only to subscribers who have or had one"
            )
        }
        let subscriber = OfferStore.Subscriber(
            bundleId: state.bundleId,
            environment: state.environment,
            originalTransactionId: state.originalTransactionId
        )
        let id = UUID()
        if let live = try await OfferStore.liveOffer(of: subscriber, connection: connection, logger: logger) {
            try await OfferStore.withdraw(
                live.id,
                reason: "superseded by grant \(id.uuidString.lowercased())",
                connection: connection,
                logger: logger
            )
            CampaignMetrics().withdrawn()
        }
        let time = now()
        let signed = try signer.signOffer(
            product: grant.productId,
            offer: grant.offerIdentifier,
            appAccountToken: state.appAccountToken,
            transactionId: state.originalTransactionId,
            nonce: UUID(),
            now: time
        )
        let offer = NewOffer(
            decisionId: nil,
            grantId: id,
            bundleId: state.bundleId,
            environment: state.environment,
            originalTransactionId: state.originalTransactionId,
            appAccountToken: state.appAccountToken,
            campaignId: grant.campaign,
            sourceNotificationUUID: nil,
            triggeredAt: time,
            priority: Self.priority,
            productId: grant.productId,
            offerIdentifier: grant.offerIdentifier,
            signed: signed,
            deliverableUntil: time.addingTimeInterval(TimeInterval(grant.deliverableFor))
        )
        guard
            try await GrantStore.create(
                id: id,
                grant,
                idempotencyKey: key,
                adminKeyId: adminKeyId,
                offer: offer,
                connection: connection,
                logger: logger
            )
        else { throw LostRace() }
        let metrics = CampaignMetrics()
        metrics.signed(purpose: "grant")
        metrics.issued(campaign: grant.campaign)
        return .created(
            StoredGrant(
                id: id,
                request: grant,
                offerId: offer.id,
                originalTransactionId: state.originalTransactionId,
                environment: state.environment,
                deliverableUntil: offer.deliverableUntil,
                createdAt: time,
                requestSHA256: grant.fingerprint
            )
        )
    }

    private static func answer(_ stored: StoredGrant) -> Answer {
        Answer(
            grant: .init(
                id: stored.id.uuidString.lowercased(),
                bundleId: stored.request.bundleId,
                campaign: stored.request.campaign,
                reason: stored.request.reason
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
