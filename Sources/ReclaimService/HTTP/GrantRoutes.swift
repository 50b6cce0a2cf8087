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
    let postgres: PostgresClient
    let config: ReclaimConfig
    let signers: [String: OfferSigner]
    let authentication: KeyAuthentication
    var now: @Sendable () -> Date = Date.init

    /// A grant ranks above every campaign: a campaign's decision never withdraws it.
    static let priority = Int(Int32.max)
    static let maxBodyBytes = 8 * 1024
    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!

    struct Body: Decodable {
        let bundleId: String
        let appAccountToken: String?
        let originalTransactionId: String?
        let environment: String?
        let productId: String
        let offerIdentifier: String
        let reason: String
        let campaign: String
        let deliverableFor: String?
    }

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
            guard let key = request.headers[Self.idempotencyKey], (1...200).contains(key.utf8.count),
                key.unicodeScalars.allSatisfy({ $0.isASCII && $0.value >= 0x21 && $0.value < 0x7F })
            else {
                throw Problem.badRequest("missing-idempotency-key", "send an Idempotency-Key header: 1 to 200 visible ASCII characters")
            }
            let body = try await readJSONBody(request, context: context, limit: Self.maxBodyBytes, record: { _ in })
            let (grant, environment, deliverableFor) = try validate(body)
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
                            environment: environment,
                            deliverableFor: deliverableFor,
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
                guard stored.request == grant else {
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

    /// Checks the body; 400 `invalid-grant` with the reason.
    private func validate(_ buffer: ByteBuffer) throws -> (GrantRequest, String?, TimeInterval) {
        func invalid(_ detail: String) -> Problem { .badRequest("invalid-grant", detail) }
        let body: Body
        do {
            body = try JSONDecoder().decode(Body.self, from: buffer)
        } catch {
            throw invalid(
                "the body must be JSON with bundleId, appAccountToken or originalTransactionId, productId, offerIdentifier, reason, campaign"
            )
        }
        for (name, value) in [
            ("bundleId", body.bundleId), ("productId", body.productId), ("offerIdentifier", body.offerIdentifier), ("reason", body.reason),
            ("campaign", body.campaign),
        ] {
            guard !value.isEmpty, value.count <= 200, !value.unicodeScalars.contains("\u{2063}") else {
                throw invalid("\(name) must be 1 to 200 characters")
            }
        }
        guard body.appAccountToken != nil || body.originalTransactionId != nil else {
            throw invalid("name the subscriber by appAccountToken or originalTransactionId")
        }
        var token: UUID?
        if let text = body.appAccountToken {
            guard let uuid = UUID(uuidString: text) else { throw invalid("appAccountToken must be a UUID") }
            token = uuid
        }
        if let otid = body.originalTransactionId, otid.isEmpty || otid.count > 64 {
            throw invalid("originalTransactionId must be 1 to 64 characters")
        }
        var deliverableFor: TimeInterval = 7 * 86_400
        if let text = body.deliverableFor {
            guard let duration = try? ConfigDuration(parsing: text), duration.seconds > 0, duration.seconds <= 90 * 86_400 else {
                throw invalid("deliverableFor must be a duration from 1s to 90d, e.g. 7d")
            }
            deliverableFor = TimeInterval(duration.seconds)
        }
        let request = GrantRequest(
            bundleId: body.bundleId,
            appAccountToken: token,
            originalTransactionId: body.originalTransactionId,
            productId: body.productId,
            offerIdentifier: body.offerIdentifier,
            reason: body.reason,
            campaign: body.campaign
        )
        return (request, body.environment, deliverableFor)
    }

    private func grantOffer(
        _ grant: GrantRequest,
        key: String,
        adminKeyId: UUID,
        environment: String?,
        deliverableFor: TimeInterval,
        signer: OfferSigner,
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> Outcome {
        if let existing = try await GrantStore.existing(bundleId: grant.bundleId, idempotencyKey: key, connection: connection, logger: logger) {
            return .existing(existing)
        }
        guard let state = try await GrantStore.lockSubscription(for: grant, environment: environment, connection: connection, logger: logger),
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
            deliverableUntil: time.addingTimeInterval(deliverableFor)
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
                createdAt: time
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
