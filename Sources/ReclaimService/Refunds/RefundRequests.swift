import Foundation
import Logging
import Metrics
import PostgresNIO
import ReclaimDomain
import ReclaimStore

/// Apple's refund requests, answered by the app's `refunds` policies (docs/refunds.md).
///
/// In the notification's own job transaction: a `CONSUMPTION_REQUEST` of an app with `refunds` is decided (arm,
/// policy, body) and recorded in `reclaim.refund_requests` with a `refund_answer` job, both once per notification
/// whatever Apple's redeliveries (the notification UUID is unique in both), or recorded `unanswered` with why when the
/// answer would state a fact Reclaim does not know; `REFUND` and `REFUND_DECLINED` close the transaction's open
/// request. The job sends the answer (``RefundAnswerJobHandler``), on a lane of its own.
struct RefundRequests: Sendable {
    static let jobKind = "refund_answer"
    /// Apple: "Respond within 12 hours of receiving the CONSUMPTION_REQUEST notification." (Send Consumption
    /// Information). Past it, the answer is recorded as expired and not sent.
    static let window: TimeInterval = 12 * 3600

    let apps: [String: ReclaimConfig.App]
    let verifier: AppleJWSVerifier
    let now: @Sendable () -> Date

    init(config: ReclaimConfig, verifier: AppleJWSVerifier, now: @escaping @Sendable () -> Date = Date.init) {
        self.apps = Dictionary(config.apps.map { ($0.bundleId, $0) }, uniquingKeysWith: { first, _ in first })
        self.verifier = verifier
        self.now = now
    }

    func observe(_ notification: VerifiedNotification, uuid: UUID, connection: PostgresConnection, logger: Logger) async throws {
        let payload = notification.payload
        switch payload.notificationType.rawValue {
        case "CONSUMPTION_REQUEST": try await request(notification, uuid: uuid, connection: connection, logger: logger)
        case "REFUND", "REFUND_DECLINED":
            guard let bundleId = payload.bundleId, let environment = payload.environment?.rawValue,
                let transaction = notification.transaction, let transactionId = transaction.transactionId
            else { return }
            try await RefundRequestStore.recordOutcome(
                bundleId: bundleId,
                environment: environment,
                transactionId: transactionId,
                outcome: payload.notificationType.rawValue == "REFUND" ? "refunded" : "declined",
                at: Date(unixMilliseconds: payload.signedDate ?? 0),
                revocationType: transaction.revocationType,
                revocationPercentage: transaction.revocationPercentage.map(Int.init),
                connection: connection,
                logger: logger
            )
        default: return
        }
    }

    private func request(_ notification: VerifiedNotification, uuid: UUID, connection: PostgresConnection, logger: Logger) async throws {
        let payload = notification.payload
        guard let bundleId = payload.bundleId, let environment = payload.environment?.rawValue,
            let policies = apps[bundleId]?.refunds?.domain
        else { return }  // An app without `refunds` answers nothing.
        guard let transaction = notification.transaction, let transactionId = transaction.transactionId,
            let originalTransactionId = transaction.originalTransactionId
        else {
            logger.warning("a CONSUMPTION_REQUEST without a transaction: not answered", metadata: ["notificationUUID": "\(uuid)"])
            return
        }
        // A subscriber Reclaim never saw is answered from the request's own signed transaction; what the history adds
        // is earlier refunds and a free trial.
        let history = try await RefundRequestStore.history(
            bundleId: bundleId,
            environment: environment,
            originalTransactionId: originalTransactionId,
            connection: connection,
            logger: logger
        )
        var freeTrial = Self.isFreeTrial(transaction)
        if !freeTrial {
            for stored in history.payloads {
                if let earlier = try? await verifier.verifyStoredNotification(stored), let t = earlier.transaction, Self.isFreeTrial(t) {
                    freeTrial = true
                    break
                }
            }
        }
        let facts = RefundFacts(
            productId: transaction.productId,
            productType: transaction.type,
            storefront: transaction.storefront,
            reason: payload.data?.consumptionRequestReason,
            purchaseDate: transaction.purchaseDate.map(Date.init(unixMilliseconds:)),
            originalPurchaseDate: transaction.originalPurchaseDate.map(Date.init(unixMilliseconds:)),
            earlierRefunds: history.refunds,
            discountRedeemed: transaction.offerType != nil,
            freeTrialSeen: freeTrial,
            billingPlanType: transaction.billingPlanType,
            billingPeriod: .init(
                expiresDate: transaction.expiresDate.map(Date.init(unixMilliseconds:)),
                requestedAt: Date(unixMilliseconds: payload.signedDate ?? 0)
            ),
            now: now()
        )
        let decision = policies.decide(originalTransactionId: originalTransactionId, facts: facts)
        let id = try await RefundRequestStore.insert(
            .init(
                notificationUUID: uuid,
                bundleId: bundleId,
                environment: environment,
                originalTransactionId: originalTransactionId,
                transactionId: transactionId,
                productId: transaction.productId,
                productType: transaction.type,
                reason: facts.reason,
                requestedAt: Date(unixMilliseconds: payload.signedDate ?? 0),
                arm: decision.arm,
                policyId: decision.policyId,
                counterpart: decision.counterpart,
                body: try decision.body?.json(),
                unanswered: decision.unanswered,
                facts: facts
            ),
            connection: connection,
            logger: logger
        )
        guard let id else { return }  // Recorded when Apple first delivered it.
        Counter(label: "reclaim_refund_requests_total", dimensions: [("arm", decision.arm)]).increment()
        if let why = decision.unanswered {
            logger.notice("a refund request is not answered", metadata: ["request": "\(id)", "why": "\(why)"])
            Counter(label: "reclaim_refund_answers_total", dimensions: [("status", "unanswered")]).increment()
            return
        }
        try await JobQueue.enqueue(
            // Enough attempts for a 401 retried every 10 minutes through Apple's 12 hours: the window ends the job.
            NewJob(kind: Self.jobKind, payload: "{\"request\":\(id)}", notificationUUID: uuid, maxAttempts: 100),
            connection: connection,
            logger: logger
        )
    }

    /// A free trial: Apple's offerDiscountType FREE_TRIAL ("a free sample or free trial of the purchased content").
    static func isFreeTrial(_ transaction: TransactionInfo) -> Bool { transaction.offerDiscountType == "FREE_TRIAL" }
}

/// Sends one decided answer through Send Consumption Information on the worker pool's call lanes: the request is
/// read, the answer sent with no transaction open, and the outcome recorded with the job's completion. A retryable
/// failure (429, 5xx, no answer) is this request's alone and the queue tries it again later; Apple's 401 or 403 (a
/// key revoked or being rotated) every 10 minutes within Apple's 12 hours; an error no retry cures is recorded as
/// refused, named. A crash after Apple's 202 and before the record sends this request's same body again, which Apple's
/// PUT replaces.
struct RefundAnswerJobHandler: CallingJobHandler {
    let dependencies: Dependencies
    let now: @Sendable () -> Date
    /// How often a request refused for the key (401, 403) is tried again: a rotated key is fixed in minutes, and
    /// Apple gives 12 hours.
    static let unauthorizedRetry: Duration = .seconds(600)
    /// How a request held by a stop is noted (`apple_error`, until it is sent or expires).
    static let heldNote = "held: app stopped (reclaim stop)"

    init(dependencies: Dependencies, now: @escaping @Sendable () -> Date = Date.init) {
        self.dependencies = dependencies
        self.now = now
    }

    struct Payload: Decodable { let request: Int64 }

    func call(_ job: Job, lease: CallLease, database: Database, logger: Logger) async throws -> CallRecord {
        let id = try JSONDecoder().decode(Payload.self, from: Data(job.payload.utf8)).request
        guard let request = try await RefundRequestStore.pending(id, database: database, logger: logger) else { return nil }
        func settle(_ status: String, _ appleStatus: Int?, _ error: String?) -> CallRecord {
            { connection, logger in
                try await RefundRequestStore.settle(
                    id,
                    status: status,
                    appleStatus: appleStatus,
                    appleError: error,
                    connection: connection,
                    logger: logger
                )
                Counter(label: "reclaim_refund_answers_total", dimensions: [("status", status)]).increment()
            }
        }
        let held = await dependencies.appStops.stop(of: request.bundleId, logger: logger)
        guard now().timeIntervalSince(request.requestedAt) <= RefundRequests.window else {
            logger.warning("a refund request passed Apple's 12 hours unanswered: recorded as expired", metadata: ["request": "\(id)"])
            let last = request.appleError.map { "; the last attempt: \($0)" } ?? ""
            let expired = settle("expired", request.appleStatus, "not sent: more than 12 hours after Apple's request\(last)")
            guard held != nil || request.appleError?.hasPrefix(Self.heldNote) == true else { return expired }
            // Held by a stop until Apple's 12 hours passed: counted on the stop too.
            return { connection, logger in
                try await expired?(connection, logger)
                try await AppStopStore.note(.refundExpired, bundleId: request.bundleId, connection: connection, logger: logger)
                AppStops.held("refund_answer_expired", bundleId: request.bundleId)
            }
        }
        if let held {
            // The app is stopped: this job ends and a new one looks again in 30 s (a wait costs no attempt), so the answer
            // goes out within 30 s of the resume while Apple's 12 hours last.
            AppStops.held("refund_answer", bundleId: request.bundleId)
            return { connection, logger in
                try await RefundRequestStore.noteAttempt(
                    id,
                    appleStatus: nil,
                    appleError: "\(Self.heldNote) (stop \(held.id), \(held.reason))",
                    connection: connection,
                    logger: logger
                )
                try await JobQueue.enqueue(
                    NewJob(kind: RefundRequests.jobKind, payload: job.payload, runAt: now().addingTimeInterval(30), maxAttempts: job.maxAttempts),
                    connection: connection,
                    logger: logger
                )
            }
        }
        guard let app = dependencies.config.apps.first(where: { $0.bundleId == request.bundleId }), app.serverAPI != nil,
            AppStoreAPI.baseURL(for: request.environment) != nil
        else {
            return settle("refused", nil, "not sent: app \(request.bundleId) has no serverAPI for \(request.environment)")
        }
        let client = try AppStoreServerAPIClient.onCallLane(
            app: app,
            environment: request.environment,
            lease: lease,
            dependencies: dependencies,
            database: database,
            logger: logger
        )
        do {
            try await client.sendConsumptionInformation(transactionId: request.transactionId, body: Data(request.body.utf8))
            return settle("sent", 202, nil)
        } catch let error as AppStoreAPIError where error.status == 401 || error.status == 403 {
            Counter(label: "reclaim_refund_answer_retries_total", dimensions: [("reason", "unauthorized")]).increment()
            logger.error(
                "Apple refused the key for a refund answer: tried again every 10 minutes until Apple's 12 hours pass",
                metadata: ["request": "\(id)", "error": "\(error)"]
            )
            try await RefundRequestStore.noteAttempt(id, appleStatus: error.status, appleError: "\(error)", database: database, logger: logger)
            throw RetryLater(after: Self.unauthorizedRetry, "\(error)")
        } catch let error as AppStoreAPIError where error.status != nil && !error.isRetryable {
            logger.warning("Apple refused a refund answer", metadata: ["request": "\(id)", "error": "\(error)"])
            return settle("refused", error.status, "\(error)")
        } catch let lost as CallLease.Lost {
            throw lost  // Another lane sends it.
        } catch {
            Counter(label: "reclaim_refund_answer_retries_total", dimensions: [("reason", "unavailable")]).increment()
            throw error
        }
    }
}
