import Foundation
import Logging
import Metrics
import ReclaimDomain
import ReclaimStore

/// Sends one extension grant to Apple's Extend a Subscription Renewal Date on the worker pool's call lanes, with no
/// transaction open, and records the outcome with the job's completion: `extended` with Apple's new expiration date,
/// or `refused` with Apple's error in Apple's words (`4030004 SubscriptionExtensionIneligibleError`, ...). A 429, a 5xx
/// or no answer is retried by the queue with backoff; Apple's 401 or 403 without a code (a key revoked or being
/// rotated) every 10 minutes for a day. A crash after Apple's answer and before the record sends the same
/// `requestIdentifier` again, which Apple answers as the same request.
struct RenewalExtensionJobHandler: CallingJobHandler {
    let dependencies: Dependencies
    let now: @Sendable () -> Date

    init(dependencies: Dependencies, now: @escaping @Sendable () -> Date = Date.init) {
        self.dependencies = dependencies
        self.now = now
    }

    struct Payload: Decodable { let `extension`: UUID }

    func call(_ job: Job, lease: CallLease, database: Database, logger: Logger) async throws -> CallRecord {
        let id = try JSONDecoder().decode(Payload.self, from: Data(job.payload.utf8)).extension
        guard let grant = try await RenewalExtensionStore.find(id, database: database, logger: logger), grant.status == "pending" else { return nil }
        func settle(
            _ status: String,
            _ appleStatus: Int?,
            _ error: String?,
            effectiveDate: Date? = nil,
            webOrderLineItemId: String? = nil
        ) -> CallRecord {
            { connection, logger in
                try await RenewalExtensionStore.settle(
                    id,
                    status: status,
                    effectiveDate: effectiveDate,
                    webOrderLineItemId: webOrderLineItemId,
                    appleStatus: appleStatus,
                    appleError: error,
                    connection: connection,
                    logger: logger
                )
                Counter(label: "reclaim_renewal_extensions_total", dimensions: [("status", status)]).increment()
            }
        }
        guard let app = dependencies.config.apps.first(where: { $0.bundleId == grant.bundleId }), app.serverAPI != nil else {
            return settle("refused", nil, "not sent: app \(grant.bundleId) has no serverAPI")
        }
        let request: AppStoreAPI.ExtendRenewalDateRequest
        do {
            request = try AppStoreAPI.ExtendRenewalDateRequest(
                extendByDays: grant.extendByDays,
                extendReasonCode: AppStoreAPI.ExtendReasonCode(rawValue: grant.extendReasonCode) ?? .undeclared,
                requestIdentifier: grant.idempotencyKey
            )
        } catch {
            return settle("refused", nil, "not sent: \(error)")
        }
        // Consent withdrawn since the grant was made: "no grant reaches this subscriber" holds for one already queued.
        let subscriber = SubscriberKey(bundleId: grant.bundleId, environment: grant.environment, originalTransactionId: grant.originalTransactionId)
        if let rescinded = try await ConsentStore.rescindedAt(subscriber, database: database, logger: logger) {
            return settle("refused", nil, "not sent: a parent or guardian withdrew consent on \(rescinded.formatted(.iso8601)) (RESCIND_CONSENT)")
        }
        let client = try AppStoreServerAPIClient.onCallLane(
            app: app,
            environment: grant.environment,
            lease: lease,
            dependencies: dependencies,
            database: database,
            logger: logger
        )
        do {
            let answer = try await client.extendRenewalDate(originalTransactionId: grant.originalTransactionId, request)
            guard answer.success == true else {
                return settle("refused", 200, "Apple answered success: false")
            }
            logger.notice("Apple extended a subscription's renewal date", metadata: ["grant": "\(id)", "days": "\(grant.extendByDays)"])
            return settle(
                "extended",
                200,
                nil,
                effectiveDate: answer.effectiveDate.map { Date(timeIntervalSince1970: Double($0) / 1000) },
                webOrderLineItemId: answer.webOrderLineItemId
            )
        } catch {
            switch CallFailure.of(error, job: job, waitingSince: grant.createdAt, now: now()) {
            case .refused(let status, let reason)?:
                logger.warning("Apple refused a renewal-date extension", metadata: ["grant": "\(id)", "error": "\(reason)"])
                return settle("refused", status, reason)
            case .keyRefused(let apple)?:
                logger.error(
                    "Apple refused the key for a renewal-date extension: tried again every 10 minutes for a day",
                    metadata: ["grant": "\(id)", "error": "\(apple)"]
                )
                try await RenewalExtensionStore.noteAttempt(id, appleStatus: apple.status, appleError: "\(apple)", database: database, logger: logger)
                throw RetryLater(after: CallFailure.keyRetry, "\(apple)")
            case nil:
                throw error
            }
        }
    }
}
