import Foundation
import Logging
import Metrics
import ReclaimDomain
import ReclaimStore

/// Sends one Set App Account Token call (`PUT /inApps/v1/transactions/{originalTransactionId}/appAccountToken`) on
/// the worker pool's call lanes, paced at Apple's limit for the endpoint (20 a second per app), and records the
/// answer with the job's completion: `set`, or `refused` with Apple's error in Apple's words (e.g. `4000185
/// FamilyTransactionNotSupportedError`). A 429, a 5xx or no answer is retried by the queue with backoff; Apple's
/// 401 or 403 without a code every 10 minutes for a day, as for extensions. Sending it twice is harmless: the call
/// sets a value.
struct AppAccountTokenJobHandler: CallingJobHandler {
    let dependencies: Dependencies
    var now: @Sendable () -> Date = Date.init

    struct Payload: Decodable { let update: UUID }

    func call(_ job: Job, lease: CallLease, database: Database, logger: Logger) async throws -> CallRecord {
        let id = try JSONDecoder().decode(Payload.self, from: Data(job.payload.utf8)).update
        // Gone: the subscriber was forgotten since (their updates are deleted with them).
        guard let update = try await AppAccountTokenStore.find(id, database: database, logger: logger), update.status == "pending" else { return nil }
        func settle(_ status: String, _ appleStatus: Int?, _ error: String?) -> CallRecord {
            { connection, logger in
                try await AppAccountTokenStore.settle(
                    id,
                    status: status,
                    appleStatus: appleStatus,
                    appleError: error,
                    connection: connection,
                    logger: logger
                )
                Counter(label: "reclaim_app_account_tokens_total", dimensions: [("status", status)]).increment()
            }
        }
        let subscriber = update.subscriber
        guard let app = dependencies.config.apps.first(where: { $0.bundleId == subscriber.bundleId }), app.serverAPI != nil,
            app.setAppAccountToken != .off
        else {
            return settle("refused", nil, "not sent: app \(subscriber.bundleId) no longer has setAppAccountToken and serverAPI")
        }
        if let rescinded = try await ConsentStore.rescindedAt(subscriber, database: database, logger: logger) {
            return settle("refused", nil, "not sent: a parent or guardian withdrew consent on \(rescinded.formatted(.iso8601)) (RESCIND_CONSENT)")
        }
        let client = try AppStoreServerAPIClient.onCallLane(
            app: app,
            environment: subscriber.environment,
            lease: lease,
            dependencies: dependencies,
            database: database,
            logger: logger
        )
        do {
            try await client.setAppAccountToken(originalTransactionId: subscriber.originalTransactionId, update.token)
            logger.notice("Apple set a subscription's appAccountToken", metadata: ["update": "\(id)", "source": "\(update.source.rawValue)"])
            return settle("set", 200, nil)
        } catch {
            switch CallFailure.of(error, job: job, waitingSince: update.createdAt, now: now()) {
            case .refused(let status, let reason)?:
                logger.warning("Apple refused Set App Account Token", metadata: ["update": "\(id)", "error": "\(reason)"])
                return settle("refused", status, reason)
            case .keyRefused(let apple)?:
                logger.error(
                    "Apple refused the key for Set App Account Token: tried again every 10 minutes for a day",
                    metadata: ["error": "\(apple)"]
                )
                throw RetryLater(after: CallFailure.keyRetry, "\(apple)")
            case nil:
                throw error
            }
        }
    }
}
