import Crypto
import Foundation
import Logging
import PostgresNIO
import ReclaimDomain
import ReclaimStore
import Synchronization

/// `reclaim backfill`: seeds subscription state for subscribers Reclaim has never heard of (a new installation,
/// or notifications older than Apple's history), from Get All Subscription Statuses.
///
/// Each transaction id's subscriptions are verified (signed transaction and renewal info, the same chain checks
/// as notifications) and applied like a notification would be. By default as a snapshot of type `BACKFILL` that
/// no campaign triggers on: backfill informs state, it sends nobody an offer. With `evaluate`, as the
/// notification the status implies (expired by the subscriber's choice is EXPIRED/VOLUNTARY, auto-renew off is
/// DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED, …), stored with source `backfill` so the campaigns' decisions
/// can refer to it, and evaluated by the campaigns like a notification from Apple.
/// A newer notification always wins (state moves only forward by signedDate). Each id is recorded in
/// `reclaim.backfill_transactions` in the same transaction as its state and decisions, so a second run after an
/// interruption skips what was done and redoes nothing.
///
/// Ids are fetched concurrently at the endpoint's rate budget (``AppleAPIPacer``: Apple's 50 a second in
/// Production, shared with every other Reclaim process). An id that is not a transaction id, or whose answer fails
/// (verification, an error Apple's retries did not cure), is recorded with its reason and the run goes on; a later
/// run tries the failed ones again. Only what no later id can escape stops the run: Apple refusing the key (401,
/// 403), or the database.
public enum Backfill {
    public struct Counts: Sendable, Equatable {
        /// Ids given (duplicates included).
        public var total = 0
        public var seeded = 0
        /// Handled by an earlier run (or given twice).
        public var skipped = 0
        public var notFound = 0
        /// Not transaction ids: recorded, never sent to Apple.
        public var invalid = 0
        public var failed = 0
        /// Whose subscriber was forgotten on request (reclaim subscribers forget): nothing stored.
        public var forgotten = 0
        public var subscriptions = 0
        /// 429s Apple answered during the run (each paused the endpoint until its Retry-After).
        public var rateLimited = 0
        /// Why ids failed, with how many failed so.
        public var failures: [String: Int] = [:]
        /// A dry run with `evaluate`: what the campaigns would decide, grouped, with how many.
        public var wouldDecide: [DryRunDecision: Int] = [:]
        /// A dry run: the subscriptions that would be stored, by Apple's status (`active`, `expired`, …).
        public var wouldStore: [String: Int] = [:]

        public init() {}

        /// Ids done, this run or before.
        public var done: Int { seeded + skipped + notFound + invalid + failed + forgotten }
    }

    /// What `reclaim backfill` may be given; anything else is recorded as invalid.
    static func isTransactionId(_ id: String) -> Bool { !id.isEmpty && id.count <= 64 && id.allSatisfy(\.isASCII) && id.allSatisfy(\.isNumber) }

    public static func run(
        config: ReclaimConfig,
        url: DatabaseURL,
        app bundleId: String,
        environment: String? = nil,
        transactionIds: [String],
        evaluate: Bool = false,
        dryRun: Bool = false,
        concurrency: Int? = nil,
        logger: Logger,
        progress: @escaping @Sendable (Counts) -> Void = { _ in },
        report: @escaping @Sendable (String) -> Void
    ) async throws -> Counts {
        guard let app = config.apps.first(where: { $0.bundleId == bundleId }) else { throw ConfigError("app \(bundleId) is not configured") }
        guard let api = app.serverAPI else {
            throw ConfigError("app \(bundleId) has no serverAPI (keyId, issuerId, file): backfill needs an In-App Purchase key")
        }
        if let environment, !["Production", "Sandbox"].contains(environment) {
            throw ConfigError("--environment \(environment): Production or Sandbox")
        }
        if let environment, !app.environments.contains(environment) {
            throw ConfigError("app \(bundleId) does not accept \(environment) (its environments: \(app.environments.joined(separator: ", ")))")
        }
        // Production unless told: an id Production does not know is not asked of Sandbox (a real base lives in
        // Production; asking again doubles the calls and mixes test purchases in). An app that accepts only Sandbox
        // is asked in Sandbox.
        guard let environments = environment.map({ [$0] }) ?? ["Production", "Sandbox"].first(where: app.environments.contains).map({ [$0] })
        else { throw ConfigError("app \(bundleId) accepts neither Production nor Sandbox") }
        return try await RecoveryTasks.withDependencies(config: config, url: url, logger: logger) { dependencies, http in
            let clients = try environments.map {
                try AppStoreServerAPIClient(app: app, environment: $0, http: http, pacer: dependencies.applePacer, logger: logger)
            }
            let engine = evaluate ? dependencies.campaignEngine : CampaignEngine(campaigns: [], issuer: dependencies.issuer)
            let done = try await dependencies.postgres.withConnection(logger: logger) {
                try await BackfillStore.done(bundleId: bundleId, connection: $0, logger: logger)
            }
            var counts = Counts()
            counts.total = transactionIds.count
            var pending: [String] = []
            var invalid: [String] = []
            var seen = Set<String>()
            for id in transactionIds {
                guard seen.insert(id).inserted, !done.contains(String(id.prefix(BackfillStore.maxIdLength))) else {
                    counts.skipped += 1
                    continue
                }
                if isTransactionId(id) { pending.append(id) } else { invalid.append(id) }
            }
            if !invalid.isEmpty, !dryRun {
                try await dependencies.postgres.withConnection(logger: logger) { [invalid] connection in
                    for id in invalid {
                        try await BackfillStore.record(
                            bundleId: bundleId,
                            transactionId: id,
                            environment: nil,
                            subscriptions: 0,
                            result: "invalid",
                            reason: "not a transaction id (digits, at most 64)",
                            connection: connection,
                            logger: logger
                        )
                    }
                }
                counts.invalid = invalid.count
                for id in invalid.prefix(10) {
                    report("\(id.prefix(70)): not a transaction id (digits, at most 64)\(dryRun ? "" : "; recorded as invalid")")
                }
            }
            let shared = Shared(counts)
            progress(counts)
            // Enough requests in flight to keep the budget busy while each waits ~100 ms for Apple and a few
            // milliseconds for verification and its transaction: two seconds' worth of the rate, 2 to 100.
            let rate = api.rate(.getAllSubscriptionStatuses, in: environments[0])
            let workers = concurrency ?? min(100, max(2, Int((rate * 2).rounded(.up))))
            let todo = pending
            let item = Item(
                bundleId: bundleId,
                evaluate: evaluate,
                dryRun: dryRun,
                clients: clients,
                engine: engine,
                dependencies: dependencies,
                logger: logger
            )
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<min(workers, max(1, todo.count)) {
                    group.addTask {
                        while true {
                            let index = shared.next.withLock { index -> Int in
                                defer { index += 1 }
                                return index
                            }
                            guard index < todo.count else { return }
                            let id = todo[index]
                            let outcome = try await item.handle(id)
                            let now = shared.counts.withLock { counts -> Counts in
                                switch outcome {
                                case .seeded(let subscriptions, let statuses, let decisions):
                                    counts.seeded += 1
                                    counts.subscriptions += subscriptions
                                    for status in statuses { counts.wouldStore[status, default: 0] += 1 }
                                    for decision in decisions { counts.wouldDecide[decision, default: 0] += 1 }
                                case .notFound: counts.notFound += 1
                                case .forgotten: counts.forgotten += 1
                                case .failed(let reason):
                                    counts.failed += 1
                                    counts.failures[reason, default: 0] += 1
                                }
                                return counts
                            }
                            progress(now)
                        }
                    }
                }
                // The first error ends the run at once: leaving the group with it cancels the other workers
                // (`waitForAll` would let them go on through every id before rethrowing).
                while try await group.next() != nil {}
            }
            counts = shared.counts.withLock { $0 }
            counts.rateLimited = dependencies.applePacer.rateLimited[AppleEndpoint.getAllSubscriptionStatuses.rawValue] ?? 0
            return counts
        }
    }

    /// What the run's workers share: the next id to take and the counts so far.
    final class Shared: Sendable {
        let next = Mutex(0)
        let counts: Mutex<Counts>
        init(_ counts: Counts) { self.counts = Mutex(counts) }
    }

    enum Outcome: Sendable {
        /// Stored (or, in a dry run, what would be: the statuses and the campaigns' decisions).
        case seeded(subscriptions: Int, statuses: [String] = [], decisions: [DryRunDecision] = [])
        case notFound
        /// The subscriber was forgotten on request: nothing stored, the id not recorded.
        case forgotten
        case failed(reason: String)
    }

    /// A failure's reason as the summary groups it: Apple's answer without the id, or the kind of verification
    /// failure.
    static func reason(_ error: any Error) -> String {
        if let error = error as? AppStoreAPIError {
            switch (error.status, error.errorCode) {
            case (nil, _): return "no answer from Apple"
            case (let status?, let code?): return "Apple answered \(status) (\(AppleErrorCode.describe(code)))"
            case (let status?, nil): return status == 200 ? "Apple's answer could not be read" : "Apple answered \(status)"
            }
        }
        return "verification: \(String("\(error)".prefix(120)))"
    }

}
