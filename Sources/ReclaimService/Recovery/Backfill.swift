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
        public var done: Int { seeded + skipped + notFound + invalid + failed }
    }

    /// One line of a dry run's answer: a campaign (and variant) would decide this, for this reason (its kind: the
    /// words before the details, e.g. `condition not met: lapsedWithin`).
    public struct DryRunDecision: Hashable, Sendable, Codable, Comparable {
        public var campaign: String
        public var variant: String
        /// `offered`, `held_out`, `skipped`, or `scheduled` (a delayed campaign, decided when it fires).
        public var outcome: String
        public var reason: String

        public static func < (a: Self, b: Self) -> Bool {
            (a.campaign, a.variant, a.outcome, a.reason) < (b.campaign, b.variant, b.outcome, b.reason)
        }

        /// A reason without its details (dates, counts), so that like decisions group together.
        static func kind(of reason: String) -> String {
            let parts = reason.split(whereSeparator: { $0 == ":" || $0 == ";" }).map { $0.trimmingCharacters(in: .whitespaces) }
            guard var first = parts.first else { return reason }
            if first == "condition not met", parts.count > 1 {
                return "condition not met: " + (parts[1].split(separator: " ").first.map(String.init) ?? parts[1])
            }
            // The arm is the row's variant already.
            if let arm = first.range(of: " (variant ") { first = String(first[..<arm.lowerBound]) }
            return first
        }
    }

    /// Apple's subscription status, named (Get All Subscription Statuses' `status`).
    static func statusName(_ status: Int64?) -> String {
        switch status {
        case 1: "active"
        case 2: "expired"
        case 3: "billing retry"
        case 4: "grace period"
        case 5: "revoked"
        default: "unknown"
        }
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
        case failed(reason: String)
    }

    /// One id: asked of Apple in each environment until one knows it, verified, applied and recorded in one
    /// transaction.
    struct Item: Sendable {
        let bundleId: String
        let evaluate: Bool
        /// Asks Apple and evaluates as a real run does, in a transaction rolled back: writes nothing.
        let dryRun: Bool
        let clients: [AppStoreServerAPIClient]
        let engine: CampaignEngine
        let dependencies: Dependencies
        let logger: Logger

        func handle(_ id: String) async throws -> Outcome {
            var found: (environment: String, snapshots: [(SubscriptionSnapshot, String)])?
            do {
                for client in clients {
                    do {
                        let statuses = try await client.subscriptionStatuses(transactionId: id)
                        found = (
                            client.environment,
                            try await snapshots(statuses, bundleId: bundleId, evaluate: evaluate, verifier: dependencies.verifier)
                        )
                        break
                    } catch let error as AppStoreAPIError where error.status == 404 && error.errorCode == 4_040_010 {
                        continue  // TransactionIdNotFoundError: not in this environment; try the next one.
                    }
                }
            } catch let error as AppStoreAPIError where error.isCredentialFailure {
                throw error  // No later id would get through either.
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                let reason = Backfill.reason(error)
                if dryRun { return .failed(reason: reason) }
                try await dependencies.postgres.withConnection(logger: logger) { [bundleId, logger] connection in
                    try await BackfillStore.record(
                        bundleId: bundleId,
                        transactionId: id,
                        environment: nil,
                        subscriptions: 0,
                        result: "failed",
                        reason: "\(error)",
                        connection: connection,
                        logger: logger
                    )
                }
                return .failed(reason: reason)
            }
            let answer = found
            let statuses = (answer?.snapshots ?? []).map { Backfill.statusName($0.0.appleStatus) }
            if dryRun, !evaluate {
                return answer.map { .seeded(subscriptions: $0.snapshots.count, statuses: statuses) } ?? .notFound
            }
            do {
                try await store(answer, id: id)
            } catch let rolledBack as DryRunRolledBack {
                return answer.map { .seeded(subscriptions: $0.snapshots.count, statuses: statuses, decisions: rolledBack.decisions) } ?? .notFound
            }
            return found.map { .seeded(subscriptions: $0.snapshots.count) } ?? .notFound
        }

        /// Stores the answer's state, the implied notifications and the campaigns' decisions, and records the id, in
        /// one transaction; a dry run reads back what it decided and rolls it all back (``DryRunRolledBack``).
        private func store(_ answer: (environment: String, snapshots: [(SubscriptionSnapshot, String)])?, id: String) async throws {
            try await dependencies.postgres.transaction(logger: logger) { [bundleId, engine, dryRun, logger] connection in
                for (snapshot, signedTransaction) in answer?.snapshots ?? [] {
                    if snapshot.notificationType != Backfill.stateOnly {
                        let implied = NotificationRecord(
                            notificationUUID: snapshot.notificationUUID,
                            notificationType: snapshot.notificationType,
                            subtype: snapshot.subtype,
                            bundleId: snapshot.bundleId,
                            environment: snapshot.environment,
                            signedDateMillis: Int64((snapshot.signedDate.timeIntervalSince1970 * 1000).rounded()),
                            originalTransactionId: snapshot.originalTransactionId,
                            transactionId: snapshot.transaction?.transactionId,
                            appAccountToken: snapshot.appAccountToken,
                            productId: snapshot.transaction?.productId,
                            signedPayload: signedTransaction
                        )
                        let stored = try await NotificationStore.insertProcessedHere(
                            implied,
                            source: "backfill",
                            connection: connection,
                            logger: logger
                        )
                        guard stored else { continue }  // Evaluated by an earlier backfill of the same answer.
                    }
                    try await engine.process(snapshot, connection: connection, logger: logger)
                }
                if dryRun {
                    let uuids = (answer?.snapshots ?? []).map(\.0.notificationUUID)
                    throw DryRunRolledBack(decisions: try await Self.decisions(of: uuids, connection: connection, logger: logger))
                }
                try await BackfillStore.record(
                    bundleId: bundleId,
                    transactionId: id,
                    environment: answer?.environment,
                    subscriptions: answer?.snapshots.count ?? 0,
                    result: answer == nil ? "not found" : "seeded",
                    reason: nil,
                    connection: connection,
                    logger: logger
                )
            }
        }

        /// The decisions the campaigns made in this transaction for these implied notifications, and the delayed
        /// campaigns they scheduled.
        static func decisions(of uuids: [UUID], connection: PostgresConnection, logger: Logger) async throws -> [DryRunDecision] {
            var decisions: [DryRunDecision] = []
            let rows = try await connection.query(
                """
                SELECT campaign_id, coalesce(variant_id, ''), outcome, reason FROM reclaim.campaign_decisions
                WHERE notification_uuid = ANY(\(uuids))
                UNION ALL
                SELECT payload->>'campaignId', '', 'scheduled', 'decided when it fires' FROM reclaim.jobs
                WHERE kind = \(CampaignFire.jobKind) AND upper(payload->>'notificationUUID') = ANY(\(uuids.map(\.uuidString)))
                """,
                logger: logger
            )
            for try await (campaign, variant, outcome, reason) in rows.decode((String, String, String, String).self) {
                decisions.append(DryRunDecision(campaign: campaign, variant: variant, outcome: outcome, reason: DryRunDecision.kind(of: reason)))
            }
            return decisions
        }
    }

    /// Ends a dry run's transaction (rolled back, so nothing is written), carrying what it decided.
    struct DryRunRolledBack: Error {
        let decisions: [DryRunDecision]
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

    /// The notification type of a snapshot that only seeds state.
    static let stateOnly = "BACKFILL"

    /// One snapshot per subscription in the answer (with its signed transaction info), each verified in full;
    /// throws when any fails verification.
    static func snapshots(
        _ statuses: AppStoreAPI.StatusResponse,
        bundleId: String,
        evaluate: Bool,
        verifier: AppleJWSVerifier
    ) async throws -> [(SubscriptionSnapshot, String)] {
        if let answered = statuses.bundleId, answered != bundleId {
            throw AppStoreAPIError(
                status: 200,
                errorCode: nil,
                description: "Get All Subscription Statuses answered for \(answered), not \(bundleId)"
            )
        }
        var snapshots: [(SubscriptionSnapshot, String)] = []
        for group in statuses.data {
            for last in group.lastTransactions {
                guard let signedTransaction = last.signedTransactionInfo else { continue }
                let transaction = try await verifier.verifyTransaction(signedTransaction)
                let renewal = try await last.signedRenewalInfo.asyncMap { try await verifier.verifyRenewalInfo($0, bundleId: bundleId) }
                guard transaction.bundleId == bundleId, let originalTransactionId = transaction.originalTransactionId,
                    let environment = transaction.environment?.rawValue
                else { continue }
                let signedDate = transaction.signedDate.map(Date.init(unixMilliseconds:)) ?? Date()
                let implied = evaluate ? impliedNotification(status: last.status, renewal: renewal) : nil
                snapshots.append(
                    (
                        SubscriptionSnapshot(
                            bundleId: bundleId,
                            environment: environment,
                            originalTransactionId: originalTransactionId,
                            notificationType: implied?.type ?? stateOnly,
                            subtype: implied?.subtype,
                            signedDate: signedDate,
                            notificationUUID: uuid(for: "backfill|\(bundleId)|\(originalTransactionId)|\(signedTransaction.suffix(86))"),
                            appleStatus: last.status,
                            transaction: transaction,
                            renewalInfo: renewal
                        ),
                        signedTransaction
                    )
                )
            }
        }
        return snapshots
    }

    /// The notification Apple would have sent for a subscription in this status: what campaigns trigger on.
    /// nil for an active subscription that renews (nothing to win back or retain).
    static func impliedNotification(status: Int64?, renewal: RenewalInfo?) -> (type: String, subtype: String?)? {
        switch status {
        case 1: renewal?.autoRenewStatus == 0 ? ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED") : nil
        case 2:
            switch renewal?.expirationIntent {
            case 1: ("EXPIRED", "VOLUNTARY")
            case 2: ("EXPIRED", "BILLING_RETRY")
            case 3: ("EXPIRED", "PRICE_INCREASE")
            case 4: ("EXPIRED", "PRODUCT_NOT_FOR_SALE")
            default: ("EXPIRED", nil)
            }
        case 3: ("DID_FAIL_TO_RENEW", nil)
        case 4: ("DID_FAIL_TO_RENEW", "GRACE_PERIOD")
        case 5: ("REVOKE", nil)
        default: nil
        }
    }

    /// A stable UUID for a backfilled snapshot (the same answer gives the same id), marked as a name-based UUID.
    static func uuid(for name: String) -> UUID {
        var bytes = Array(SHA256.hash(data: Data(name.utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x50
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9], bytes[10], bytes[11], bytes[12],
                bytes[13], bytes[14], bytes[15]
            )
        )
    }
}

extension Optional {
    fileprivate func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let self else { return nil }
        return try await transform(self)
    }
}
