import Foundation
import Logging
import ReclaimDomain
import ReclaimStore

/// Set App Account Token from what the app proves (`POST /v1/offers/lookup` with a user token): the purchase is the
/// signed transaction's, the user is the token's; when the purchase carries no token (bought in the App Store, a
/// code redeemed there, Apple's win-back offer from Settings) or, in `correct` mode, another one, a call is queued.
struct AccountTokenRepairs: Sendable {
    let postgres: Database
    let modes: [String: AppAccountTokenRepair.Mode]

    init(postgres: Database, config: ReclaimConfig) {
        self.postgres = postgres
        self.modes = Dictionary(config.apps.map { ($0.bundleId, $0.setAppAccountToken) }, uniquingKeysWith: { first, _ in first })
    }

    func proven(_ transaction: TransactionInfo, of subscriber: SubscriberKey, user: UUID, logger: Logger) async throws {
        guard let mode = modes[subscriber.bundleId],
            let update = AppAccountTokenRepair.update(known: user, transaction: transaction, source: .lookup, mode: mode)
        else { return }
        let new = try await postgres.transaction(logger: logger) { connection in
            // A subscriber forgotten on request (by either identifier) is not told to Apple again (docs/privacy.md). An
            // erasure under way has no row of a purchase never stored for this to wait on, and would not see what this
            // queues (``WorkerBarrier``): then nothing is queued, and the user's next lookup queues it if still due. The
            // lookup does not wait for it (an erasure or a withdrawal can take seconds; lookups would hold the pool).
            guard try await WorkerBarrier.tryShare(connection: connection, logger: logger) else { return 0 }
            let forgotten = try await SubscriberErasure.isForgotten(
                bundleId: subscriber.bundleId,
                originalTransactionId: subscriber.originalTransactionId,
                appAccountToken: user,
                connection: connection,
                logger: logger
            )
            guard !forgotten else { return 0 }
            return try await AppAccountTokenStore.enqueue(
                [AppAccountTokenUpdate(subscriber: subscriber, token: update.token, replaces: update.replaces, source: .lookup)],
                connection: connection,
                logger: logger
            )
        }
        if new > 0 {
            logger.info("Set App Account Token queued for a purchase the lookup proved", metadata: ["replaces": "\(update.replaces != nil)"])
        }
    }
}
