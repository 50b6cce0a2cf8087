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
        /// Imported before and decided (`--evaluate`) from Apple's kept answer: Apple not asked.
        public var fromImport = 0
        /// Ids sent to Apple this run.
        public var asked = 0
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
        public var done: Int { seeded + skipped + notFound + invalid + failed + forgotten + fromImport }
    }

    /// What `reclaim backfill` may be given; anything else is recorded as invalid.
    static func isTransactionId(_ id: String) -> Bool { SubscriberLookup.Identifier.isTransactionId(id) }

    public static func run(
        config: ReclaimConfig,
        url: DatabaseURL,
        app bundleId: String,
        environment: String? = nil,
        transactionIds: [String],
        evaluate: Bool = false,
        dryRun: Bool = false,
        refresh: Bool = false,
        pace: Double? = nil,
        concurrency: Int? = nil,
        logger: Logger,
        progress: @escaping @Sendable (Counts) -> Void = { _ in },
        report: @escaping @Sendable (String) -> Void
    ) async throws -> Counts {
        guard let app = config.apps.first(where: { $0.bundleId == bundleId }) else { throw ConfigError("app \(bundleId) is not configured") }
        guard let api = app.serverAPI else {
            throw ConfigError("app \(bundleId) has no serverAPI (keyId, issuerId, file): backfill needs an In-App Purchase key")
        }
        // Checked here, not only by the command: a pace of 0 or NaN would trap converting 1000 / pace to whole milliseconds.
        if let pace, !(pace > 0 && pace <= 10_000) { throw ConfigError("pace \(pace): from 0 to 10000 ids a second") }
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
            // One pass to Apple: an id imported before is not asked again (unless --refresh); with --evaluate, one
            // imported without deciding is decided from Apple's kept answer.
            var pending: [Work] = []
            var invalid: [String] = []
            var seen = Set<String>()
            for id in transactionIds {
                guard seen.insert(id).inserted else {
                    counts.skipped += 1
                    continue
                }
                guard isTransactionId(id) else {
                    if done[String(id.prefix(BackfillStore.maxIdLength))] == nil { invalid.append(id) } else { counts.skipped += 1 }
                    continue
                }
                switch done[id] {
                case nil: pending.append(.ask(id))
                case _ where refresh: pending.append(.ask(id))
                case let earlier? where evaluate && !earlier.evaluated && earlier.result == "seeded":
                    // Imported before Apple's answers were kept (schema 34): asked again, once.
                    pending.append(earlier.answered ? .decide(id) : .ask(id))
                default: counts.skipped += 1
                }
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
                refresh: refresh,
                clients: clients,
                engine: engine,
                dependencies: dependencies,
                logger: logger
            )
            // Imported decisions paced (`--pace`): a team's webhook receiver gets offer.issued at that rate, not all at once.
            let spacing: Duration? = evaluate && !dryRun ? pace.map { .milliseconds(Int64((1000 / $0).rounded(.up))) } : nil
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<min(workers, max(1, todo.count)) {
                    group.addTask {
                        while true {
                            let index = shared.next.withLock { index -> Int in
                                defer { index += 1 }
                                return index
                            }
                            guard index < todo.count else { return }
                            if let spacing {
                                let slot = shared.slot.withLock { next -> ContinuousClock.Instant in
                                    let slot = max(next, .now)
                                    next = slot + spacing
                                    return slot
                                }
                                try await Task.sleep(until: slot)
                            }
                            let outcome: Outcome
                            switch todo[index] {
                            case .ask(let id):
                                shared.counts.withLock { $0.asked += 1 }
                                outcome = try await item.handle(id)
                            case .decide(let id): outcome = try await item.handleImported(id)
                            }
                            let now = shared.counts.withLock { counts -> Counts in
                                switch outcome {
                                case .seeded(let subscriptions, let statuses, let decisions):
                                    counts.seeded += 1
                                    counts.subscriptions += subscriptions
                                    for status in statuses { counts.wouldStore[status, default: 0] += 1 }
                                    for decision in decisions { counts.wouldDecide[decision, default: 0] += 1 }
                                case .fromImport(let subscriptions, let decisions):
                                    counts.fromImport += 1
                                    counts.subscriptions += subscriptions
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
        /// When the next paced id may go (`--pace`).
        let slot = Mutex(ContinuousClock.now)
        let counts: Mutex<Counts>
        init(_ counts: Counts) { self.counts = Mutex(counts) }
    }

    /// What a run does with an id: ask Apple, or decide from Apple's kept answer.
    enum Work: Sendable {
        case ask(String)
        case decide(String)
    }

    enum Outcome: Sendable {
        /// Imported before; decided from the kept answer (or, in a dry run, what would be decided).
        case fromImport(subscriptions: Int, decisions: [DryRunDecision] = [])
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
