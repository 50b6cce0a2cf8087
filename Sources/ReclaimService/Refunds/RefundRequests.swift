import AsyncHTTPClient
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
/// whatever Apple's redeliveries (the notification UUID is unique in both); `REFUND` and `REFUND_DECLINED` close the
/// transaction's open request. The job sends the answer (``RefundAnswerJobHandler``).
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
                body: try decision.body.json()
            ),
            connection: connection,
            logger: logger
        )
        guard let id else { return }  // Recorded when Apple first delivered it.
        try await JobQueue.enqueue(
            NewJob(kind: Self.jobKind, payload: "{\"request\":\(id)}", notificationUUID: uuid, maxAttempts: 30),
            connection: connection,
            logger: logger
        )
        Counter(label: "reclaim_refund_requests_total", dimensions: [("arm", decision.arm)]).increment()
    }

    /// A free trial: Apple's offerDiscountType FREE_TRIAL ("a free sample or free trial of the purchased content").
    static func isFreeTrial(_ transaction: TransactionInfo) -> Bool { transaction.offerDiscountType == "FREE_TRIAL" }
}

/// Sends one decided answer through Send Consumption Information, inside the job's transaction: the request's status
/// and the job's completion commit together. A retryable failure (429, 5xx, no answer) throws and the queue tries
/// again later; an error no retry cures is recorded as refused, named.
struct RefundAnswerJobHandler: JobHandler {
    let dependencies: Dependencies
    let now: @Sendable () -> Date

    init(dependencies: Dependencies, now: @escaping @Sendable () -> Date = Date.init) {
        self.dependencies = dependencies
        self.now = now
    }

    struct Payload: Decodable { let request: Int64 }

    func handle(_ job: Job, connection: PostgresConnection, logger: Logger) async throws {
        let id = try JSONDecoder().decode(Payload.self, from: Data(job.payload.utf8)).request
        guard let request = try await RefundRequestStore.lock(id, connection: connection, logger: logger), request.status == "pending" else { return }
        func settle(_ status: String, _ appleStatus: Int?, _ error: String?) async throws {
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
        guard now().timeIntervalSince(request.requestedAt) <= RefundRequests.window else {
            logger.warning("a refund request passed Apple's 12 hours unanswered: recorded as expired", metadata: ["request": "\(id)"])
            return try await settle("expired", nil, "not sent: more than 12 hours after Apple's request")
        }
        guard let app = dependencies.config.apps.first(where: { $0.bundleId == request.bundleId }), app.serverAPI != nil,
            AppStoreAPI.baseURL(for: request.environment) != nil
        else {
            return try await settle("refused", nil, "not sent: app \(request.bundleId) has no serverAPI for \(request.environment)")
        }
        var client = try AppStoreServerAPIClient(
            app: app,
            environment: request.environment,
            http: HTTPClient.shared,
            pacer: dependencies.applePacer,
            logger: logger
        )
        // The call runs inside the job's transaction: within half its deadline (20 s at most); a longer wait is the
        // queue's retry.
        client.retry.deadline = min(.seconds(20), dependencies.postgres.deadlines.transaction / 2)
        do {
            try await client.sendConsumptionInformation(transactionId: request.transactionId, body: Data(request.body.utf8))
            try await settle("sent", 202, nil)
        } catch let error as AppStoreAPIError where error.status != nil && !error.isRetryable {
            logger.warning("Apple refused a refund answer", metadata: ["request": "\(id)", "error": "\(error)"])
            try await settle("refused", error.status, "\(error)")
        }
    }
}
