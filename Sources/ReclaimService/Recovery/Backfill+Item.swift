import Foundation
import Logging
import Metrics
import PostgresNIO
import ReclaimDomain
import ReclaimStore

extension Backfill {
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
                    // The id of a subscriber forgotten on request is not stored, not even as a failure (docs/privacy.md).
                    let forgotten = try await SubscriberErasure.isForgotten(
                        bundleId: bundleId,
                        originalTransactionId: id,
                        appAccountToken: nil,
                        connection: connection,
                        logger: logger
                    )
                    guard !forgotten else { return }
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
            var answer = found
            if let snapshots = answer?.snapshots, !snapshots.isEmpty {
                // A subscriber forgotten on request stays forgotten (docs/privacy.md): nothing of theirs is stored,
                // not even the id given, and no campaign evaluates them.
                let kept = try await dependencies.postgres.withConnection(logger: logger) { [logger] connection in
                    var kept: [(SubscriptionSnapshot, String)] = []
                    for (snapshot, signed) in snapshots {
                        let forgotten = try await SubscriberErasure.isForgotten(
                            bundleId: snapshot.bundleId,
                            originalTransactionId: snapshot.originalTransactionId,
                            appAccountToken: snapshot.appAccountToken,
                            connection: connection,
                            logger: logger
                        )
                        if !forgotten { kept.append((snapshot, signed)) }
                    }
                    return kept
                }
                if kept.count < snapshots.count {
                    Counter(label: "reclaim_forgotten_inputs_total", dimensions: [("input", "backfill")]).increment(by: snapshots.count - kept.count)
                }
                if kept.isEmpty { return .forgotten }
                answer?.snapshots = kept
            }
            let statuses = (answer?.snapshots ?? []).map { Backfill.statusName($0.0.appleStatus) }
            if dryRun, !evaluate {
                return answer.map { .seeded(subscriptions: $0.snapshots.count, statuses: statuses) } ?? .notFound
            }
            do {
                try await store(answer, id: id)
            } catch let rolledBack as DryRunRolledBack {
                return answer.map { .seeded(subscriptions: $0.snapshots.count, statuses: statuses, decisions: rolledBack.decisions) } ?? .notFound
            }
            return answer.map { .seeded(subscriptions: $0.snapshots.count) } ?? .notFound
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
    }
}
