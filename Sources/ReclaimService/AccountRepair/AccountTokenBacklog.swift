import Foundation
import Logging
import ReclaimDomain
import ReclaimStore

/// `reclaim subscribers set-tokens`: the subscriptions already stored whose newest purchase carries no token while an
/// earlier transaction gave one, each judged by the rule the worker applies to new notifications
/// (``AppAccountTokenRepair``) on its newest stored notification's verified transaction, then queued (or, for a dry
/// run, counted). Subscriptions already sent a call for that token are not counted again.
public struct AccountTokenBacklog: Sendable {
    public struct Counts: Sendable, Equatable, Codable {
        /// Calls queued, or for a dry run those that would be.
        public var toSet = 0
        /// Candidates whose purchase the rule excludes: family-shared, or it holds a token after all.
        public var excluded = 0
        /// Candidates whose stored notification could not be read back (an expired chain is still read: it was
        /// verified when it arrived; this counts payloads that no longer parse).
        public var unreadable = 0

        public init(toSet: Int = 0, excluded: Int = 0, unreadable: Int = 0) {
            (self.toSet, self.excluded, self.unreadable) = (toSet, excluded, unreadable)
        }

        /// What `reclaim subscribers set-tokens` prints (docs/cli.md quotes it, marked `<!-- output: set-tokens -->`).
        public func line(app: String, dryRun: Bool) -> String {
            "\(app): \(dryRun ? "would set" : "queued") \(toSet) app account tokens; \(excluded) excluded (family-shared, or Apple's transaction holds one); \(unreadable) unreadable"
        }
    }

    public struct Refused: Error, CustomStringConvertible {
        public let description: String
    }

    let dependencies: Dependencies
    let logger: Logger

    public init(dependencies: Dependencies, logger: Logger) {
        self.dependencies = dependencies
        self.logger = logger
    }

    public func run(bundleId: String, dryRun: Bool) async throws -> Counts {
        guard let app = dependencies.config.apps.first(where: { $0.bundleId == bundleId }) else {
            throw Refused(description: "app \(bundleId) is not configured")
        }
        guard app.setAppAccountToken != .off else {
            throw Refused(description: "app \(bundleId) has setAppAccountToken off: set it to fill (or correct) in the config first")
        }
        let candidates = try await AppAccountTokenStore.backlog(of: bundleId, database: dependencies.postgres, logger: logger)
        var counts = Counts()
        var updates: [AppAccountTokenUpdate] = []
        for (environment, originalTransactionId, token, payload) in candidates {
            guard let notification = try? await dependencies.verifier.verifyStoredNotification(payload) else {
                counts.unreadable += 1
                continue
            }
            guard
                let update = AppAccountTokenRepair.update(
                    known: token,
                    transaction: notification.transaction,
                    source: .earlierTransaction,
                    mode: app.setAppAccountToken
                )
            else {
                counts.excluded += 1
                continue
            }
            let subscriber = SubscriberKey(bundleId: bundleId, environment: environment, originalTransactionId: originalTransactionId)
            updates.append(AppAccountTokenUpdate(subscriber: subscriber, token: update.token, replaces: update.replaces, source: .earlierTransaction))
        }
        if dryRun {
            counts.toSet = updates.count
            return counts
        }
        for start in stride(from: 0, to: updates.count, by: 1000) {
            let batch = Array(updates[start..<min(start + 1000, updates.count)])
            counts.toSet += try await dependencies.postgres.transaction(logger: logger) { connection in
                try await AppAccountTokenStore.enqueue(batch, connection: connection, logger: logger)
            }
        }
        return counts
    }
}
