import Foundation
import HTTPTypes
import Hummingbird
import Logging
import ReclaimDomain
import ReclaimStore

/// `POST /v1/grants` (admin key, `Idempotency-Key` header): a referral or incentive offer for one subscriber,
/// granted by ``GrantService``; with `"kind": "extension"`, days added to the subscriber's renewal date by Apple
/// (``ExtensionGrants``), answered 202 while Apple's call is to come and, with the same key again, 200 with its
/// outcome.
///
/// The subscriber is named by `originalTransactionId` or `appAccountToken` (optionally `environment`); one who
/// never had a subscription in the app is 422 `not-eligible`, and nothing is stored. 201 with the grant and its
/// offer; the same Idempotency-Key again returns the first result (200); with a different body it is 422
/// `idempotency-key-reused`.
struct GrantRoutes {
    let grants: GrantService
    let extensions: ExtensionGrants
    /// Where each grant, granted or refused, is recorded (`grant.create` in `reclaim.audit_log`).
    let audit: Database
    /// A stopped app's grants are refused (409 `app-stopped`).
    let stops: AppStops

    static let maxBodyBytes = 8 * 1024

    /// A request body by its `kind`.
    enum Parsed {
        case offer(GrantRequest)
        case `extension`(ExtensionGrantRequest)
    }
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
            var subject: (bundleId: String, identifier: String?, kind: String)?
            do {
                let response = try await handle(request, context: context) { subject = $0 }
                await record(subject, outcome: "ok", detail: "HTTP \(response.status.code)", context: context)
                return response
            } catch let problem as Problem {
                if subject != nil {
                    await record(subject, outcome: "refused", detail: "HTTP \(problem.status.code): \(problem.detail)", context: context)
                }
                throw problem
            }
        }
    }

    /// A grant in the audit log: the admin key, the subscriber's pseudonym, the app and kind, and the outcome.
    private func record(
        _ subject: (bundleId: String, identifier: String?, kind: String)?,
        outcome: String,
        detail: String,
        context: ReclaimRequestContext
    ) async {
        guard let subject, let caller = try? context.admin() else { return }
        do {
            try await Audit.record(
                "grant.create",
                target: subject.identifier.map { .subscriber($0) },
                outcome: outcome,
                detail: "\(subject.kind) for \(subject.bundleId); \(detail)",
                actor: Audit.keyActor(caller),
                database: audit,
                logger: context.logger
            )
        } catch {
            context.logger.error("the audit log did not take a grant", metadata: ["error": "\(String(reflecting: error))"])
        }
    }

    private func handle(
        _ request: Request,
        context: ReclaimRequestContext,
        subject: (_ subject: (bundleId: String, identifier: String?, kind: String)) -> Void
    ) async throws -> Response {
        let adminKeyId = try context.adminKeyId()
        guard let key = request.headers[Self.idempotencyKey], GrantRequest.isValidIdempotencyKey(key) else {
            throw Problem(.missingIdempotencyKey, "send an Idempotency-Key header: 1 to 200 visible ASCII characters")
        }
        let body = try await readJSONBody(request, context: context, limit: Self.maxBodyBytes, record: { _ in })
        let parsed: Parsed
        do throws(InvalidInput) {
            let bytes = Data(body.readableBytesView)
            parsed =
                try ExtensionGrantRequest.Kind(body: bytes) == .extension
                ? .extension(try ExtensionGrantRequest(body: bytes)) : .offer(try GrantRequest(body: bytes))
        } catch {
            throw Problem(.invalidGrant, error.reason)
        }
        let grant: GrantRequest
        switch parsed {
        case .extension(let extensionGrant):
            subject(
                (
                    extensionGrant.bundleId, extensionGrant.appAccountToken?.uuidString.lowercased() ?? extensionGrant.originalTransactionId,
                    "extension"
                )
            )
            try await refuseIfStopped(extensionGrant.bundleId, context: context)
            return try await self.extensionGrant(extensionGrant, key: key, adminKeyId: adminKeyId, request, context)
        case .offer(let offerGrant):
            grant = offerGrant
            subject((grant.bundleId, grant.appAccountToken?.uuidString.lowercased() ?? grant.originalTransactionId, "offer"))
            try await refuseIfStopped(grant.bundleId, context: context)
        }
        switch try await grants.grant(grant, key: key, adminKeyId: adminKeyId, logger: context.logger) {
        case .created(let stored): return try JSONBody(Self.answer(stored), status: .created).response(from: request, context: context)
        case .existing(let stored):
            guard stored.isSameRequest(as: grant) else { throw Problem.idempotencyKeyReused }
            return try JSONBody(Self.answer(stored)).response(from: request, context: context)
        case .notEligible(let reason): throw Problem(.notEligible, reason)
        case .keyReused: throw Problem.idempotencyKeyReused
        case .overBudget(let reason): throw Problem(.discountBudgetSpent, reason + "; overrideDiscountBudget: true grants all the same")
        case .unknownApp: throw Problem.appWithoutSigningKey(grant.bundleId)
        }
    }

    /// 409 `app-stopped` while the app is stopped (`reclaim stop`), naming the stop.
    private func refuseIfStopped(_ bundleId: String, context: ReclaimRequestContext) async throws {
        guard let stop = await stops.stop(of: bundleId, logger: context.logger) else { return }
        AppStops.held("grant", bundleId: bundleId)
        throw Problem(
            .appStopped,
            "app \(bundleId) is stopped since \(stop.stoppedAt.formatted(.iso8601)) by \(stop.stoppedBy): \(stop.reason); nothing is granted until reclaim stop --app \(bundleId) --resume"
        )
    }

    private func extensionGrant(
        _ grant: ExtensionGrantRequest,
        key: String,
        adminKeyId: UUID,
        _ request: Request,
        _ context: ReclaimRequestContext
    ) async throws -> Response {
        // Apple's requestIdentifier: "The maximum length of the string is 128 characters."
        guard key.count <= ExtensionGrantRequest.maxIdempotencyKeyLength else {
            throw Problem(.missingIdempotencyKey, "an extension's Idempotency-Key is Apple's requestIdentifier: 1 to 128 characters")
        }
        switch try await extensions.grant(grant, key: key, adminKeyId: adminKeyId, logger: context.logger) {
        case .created(let stored): return try JSONBody(ExtensionAnswer(stored), status: .accepted).response(from: request, context: context)
        case .existing(let stored):
            guard stored.requestSHA256 == grant.fingerprint else { throw Problem.idempotencyKeyReused }
            return try JSONBody(ExtensionAnswer(stored)).response(from: request, context: context)
        case .keyReused: throw Problem.idempotencyKeyReused
        case .notEligible(let reason): throw Problem(.notEligible, reason)
        case .noServerAPI:
            throw Problem(
                .notEligible,
                "app \(grant.bundleId) has no serverAPI: Reclaim cannot call Apple's Extend a Subscription Renewal Date for it"
            )
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

/// The answer to an extension grant: the grant, and Apple's outcome so far.
struct ExtensionAnswer: Encodable {
    struct Grant: Encodable {
        let id: String
        let kind = "extension"
        let bundleId: String
        let campaign: String
        let reason: String
    }
    struct Extension: Encodable {
        let originalTransactionId: String
        let environment: String
        let extendByDays: Int
        let extendReasonCode: Int
        let requestIdentifier: String
        /// pending, extended or refused.
        let status: String
        let effectiveDate: String?
        let appleError: String?
    }
    let grant: Grant
    let `extension`: Extension

    init(_ stored: StoredExtension) {
        grant = Grant(id: stored.id.uuidString.lowercased(), bundleId: stored.bundleId, campaign: stored.campaign, reason: stored.reason)
        `extension` = Extension(
            originalTransactionId: stored.originalTransactionId,
            environment: stored.environment,
            extendByDays: stored.extendByDays,
            extendReasonCode: stored.extendReasonCode,
            requestIdentifier: stored.idempotencyKey,
            status: stored.status,
            effectiveDate: stored.effectiveDate?.formatted(.iso8601),
            appleError: stored.appleError
        )
    }
}
