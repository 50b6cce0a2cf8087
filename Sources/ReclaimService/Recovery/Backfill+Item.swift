import Foundation
import Logging
import Metrics
import PostgresNIO
import ReclaimDomain
import ReclaimStore

extension Backfill {
    /// One id: asked of Apple in each environment until one knows it, verified, applied and recorded in one
    /// transaction; or, imported already, decided from Apple's kept answer without asking again.
    struct Item: Sendable {
        let bundleId: String
        let evaluate: Bool
        /// Asks Apple (for ids not imported) and evaluates as a real run does, in a transaction rolled back: writes nothing.
        let dryRun: Bool
        /// Asked again though imported (`--refresh`): the kept answer and the id's record are replaced.
        var refresh = false
        let clients: [AppStoreServerAPIClient]
        let engine: CampaignEngine
        let dependencies: Dependencies
        let logger: Logger

        typealias Answer = (environment: String, imported: [Imported])

        func handle(_ id: String) async throws -> Outcome {
            var found: Answer?
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
                try await dependencies.postgres.transaction(logger: logger) { [bundleId, logger] connection in
                    // The id of a subscriber forgotten on request is not stored, not even as a failure (docs/privacy.md);
                    // an erasure under way commits first (``WorkerBarrier``).
                    try await WorkerBarrier.share(connection: connection, logger: logger)
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
            if let imported = answer?.imported, !imported.isEmpty {
                let kept = try await dependencies.postgres.withConnection(logger: logger) { [logger] connection in
                    try await Self.unforgotten(imported, connection: connection, logger: logger)
                }
                if kept.isEmpty { return .forgotten }
                answer?.imported = kept
            }
            let statuses = (answer?.imported ?? []).map { Backfill.statusName($0.snapshot.appleStatus) }
            if dryRun, !evaluate {
                return answer.map { .seeded(subscriptions: $0.imported.count, statuses: statuses) } ?? .notFound
            }
            do {
                guard let stored = try await store(answer, id: id) else { return .forgotten }
                answer?.imported = stored
            } catch let rolledBack as DryRunRolledBack {
                if answer?.imported.isEmpty == false, rolledBack.subscriptions == 0 { return .forgotten }
                return answer.map { _ in .seeded(subscriptions: rolledBack.subscriptions, statuses: statuses, decisions: rolledBack.decisions) }
                    ?? .notFound
            }
            return answer.map { .seeded(subscriptions: $0.imported.count) } ?? .notFound
        }

        /// An id imported before: its subscriptions decided from Apple's kept answer (verified again) and the state
        /// now, Apple not asked. What each triggers is what its state now implies
        /// (``Backfill/impliedNotification(state:)``): a notification since the import counts.
        func handleImported(_ id: String) async throws -> Outcome {
            let answers = try await dependencies.postgres.withConnection(logger: logger) { [bundleId, logger] connection in
                try await BackfillStore.answers(bundleId: bundleId, transactionId: id, connection: connection, logger: logger)
            }
            var imported: [Imported] = []
            do {
                for answer in answers {
                    if let one = try await Backfill.snapshot(
                        signedTransaction: answer.signedTransactionInfo,
                        signedRenewal: answer.signedRenewalInfo,
                        status: answer.status,
                        bundleId: bundleId,
                        evaluate: false,
                        verifier: dependencies.verifier
                    ) {
                        imported.append(one)
                    }
                }
            } catch {
                return .failed(reason: "the kept answer does not verify: \(Backfill.reason(error))")
            }
            do {
                guard let kept = try await decideImported(imported, id: id) else { return .forgotten }
                return .fromImport(subscriptions: kept)
            } catch let rolledBack as DryRunRolledBack {
                if !imported.isEmpty, rolledBack.subscriptions == 0 { return .forgotten }
                return .fromImport(subscriptions: rolledBack.subscriptions, decisions: rolledBack.decisions)
            }
        }

        /// A subscriber forgotten on request stays forgotten (docs/privacy.md): nothing of theirs is stored, not even
        /// the id given, and no campaign evaluates them. Looked at before Apple's answer is stored, for the outcome,
        /// and again in the transaction that stores it, after any erasure under way has committed (``WorkerBarrier``).
        static func unforgotten(_ imported: [Imported], connection: PostgresConnection, logger: Logger) async throws -> [Imported] {
            var kept: [Imported] = []
            for one in imported {
                let forgotten = try await SubscriberErasure.isForgotten(
                    bundleId: one.snapshot.bundleId,
                    originalTransactionId: one.snapshot.originalTransactionId,
                    appAccountToken: one.snapshot.appAccountToken,
                    connection: connection,
                    logger: logger
                )
                if !forgotten { kept.append(one) }
            }
            if kept.count < imported.count {
                Counter(label: "reclaim_forgotten_inputs_total", dimensions: [("input", "backfill")]).increment(by: imported.count - kept.count)
            }
            return kept
        }

        /// The implied notification of a snapshot, stored with source `backfill` (its signed transaction as the payload)
        /// so that the campaigns' decisions can refer to it; false when it was stored before (decided already).
        private func storeImplied(_ snapshot: SubscriptionSnapshot, signedTransaction: String, connection: PostgresConnection) async throws -> Bool {
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
            return try await NotificationStore.insertProcessedHere(implied, source: "backfill", connection: connection, logger: logger)
        }

        /// Stores the answer's state, the implied notifications and the campaigns' decisions, keeps Apple's answer
        /// and records the id, in one transaction; a dry run reads back what it decided and rolls it all back
        /// (``DryRunRolledBack``). Returns the subscriptions stored; nil when the id or every subscription of the answer
        /// was forgotten (nothing stored, not even the id).
        private func store(_ answer: Answer?, id: String) async throws -> [Imported]? {
            try await dependencies.postgres.transaction(logger: logger) { [bundleId, engine, dryRun, evaluate, refresh, logger] connection in
                // An erasure that committed since the outer look, or is under way, is seen: stored again here, its
                // subscriber would be back under the erased id.
                try await WorkerBarrier.share(connection: connection, logger: logger)
                // The id given, forgotten itself (Apple may not know it here: not found), is not recorded either.
                let idForgotten = try await SubscriberErasure.isForgotten(
                    bundleId: bundleId,
                    originalTransactionId: id,
                    appAccountToken: nil,
                    connection: connection,
                    logger: logger
                )
                if idForgotten { return nil }
                var answer = answer
                if let imported = answer?.imported, !imported.isEmpty {
                    let kept = try await Self.unforgotten(imported, connection: connection, logger: logger)
                    if kept.isEmpty { return nil }
                    answer?.imported = kept
                }
                for one in answer?.imported ?? [] {
                    if one.snapshot.notificationType != Backfill.stateOnly {
                        // Evaluated by an earlier backfill of the same answer: nothing more.
                        guard try await storeImplied(one.snapshot, signedTransaction: one.signedTransaction, connection: connection) else { continue }
                    }
                    try await engine.process(one.snapshot, connection: connection, logger: logger)
                }
                if dryRun {
                    let uuids = (answer?.imported ?? []).map(\.snapshot.notificationUUID)
                    throw DryRunRolledBack(
                        decisions: try await Self.decisions(of: uuids, connection: connection, logger: logger),
                        subscriptions: answer?.imported.count ?? 0
                    )
                }
                try await BackfillStore.record(
                    bundleId: bundleId,
                    transactionId: id,
                    environment: answer?.environment,
                    subscriptions: answer?.imported.count ?? 0,
                    result: answer == nil ? "not found" : "seeded",
                    reason: nil,
                    replace: refresh,
                    connection: connection,
                    logger: logger
                )
                if let answer {
                    let kept = answer.imported.map {
                        BackfillStore.Answer(
                            environment: answer.environment,
                            originalTransactionId: $0.snapshot.originalTransactionId,
                            status: $0.snapshot.appleStatus,
                            signedTransactionInfo: $0.signedTransaction,
                            signedRenewalInfo: $0.signedRenewal
                        )
                    }
                    try await BackfillStore.keep(kept, bundleId: bundleId, transactionId: id, connection: connection, logger: logger)
                }
                if evaluate { try await BackfillStore.markEvaluated(bundleId: bundleId, transactionId: id, connection: connection, logger: logger) }
                return answer?.imported ?? []
            }
        }

        /// Decides for an imported id's subscriptions in one transaction, each on its state now and as of now (the
        /// state is not moved: it holds the import and whatever came since), and records the id evaluated; a dry run
        /// reads back what it decided and rolls it all back. Returns how many subscriptions it took; nil when every
        /// one was forgotten (nothing done, the id not marked).
        private func decideImported(_ imported: [Imported], id: String) async throws -> Int? {
            try await dependencies.postgres.transaction(logger: logger) { [bundleId, engine, dryRun, logger] connection in
                try await WorkerBarrier.share(connection: connection, logger: logger)  // as in store(_:id:)
                let kept = try await Self.unforgotten(imported, connection: connection, logger: logger)
                if !imported.isEmpty, kept.isEmpty { return nil }
                var uuids: [UUID] = []
                for one in kept {
                    let (state, _) = try await SubscriberStore.lockWithHistory(one.snapshot.subscriber, connection: connection, logger: logger)
                    guard let implied = Backfill.impliedNotification(state: state) else { continue }
                    var snapshot = one.snapshot
                    snapshot.notificationType = implied.type
                    snapshot.subtype = implied.subtype
                    snapshot.signedDate = Date()
                    snapshot.notificationUUID = Backfill.uuid(
                        for: "backfill-evaluate|\(bundleId)|\(snapshot.originalTransactionId)|\(one.signedTransaction.suffix(86))"
                    )
                    guard try await storeImplied(snapshot, signedTransaction: one.signedTransaction, connection: connection) else { continue }
                    try await engine.process(batch: [snapshot], applied: [snapshot.notificationUUID], connection: connection, logger: logger)
                    uuids.append(snapshot.notificationUUID)
                }
                if dryRun {
                    throw DryRunRolledBack(
                        decisions: try await Self.decisions(of: uuids, connection: connection, logger: logger),
                        subscriptions: kept.count
                    )
                }
                try await BackfillStore.markEvaluated(bundleId: bundleId, transactionId: id, connection: connection, logger: logger)
                return kept.count
            }
        }
    }
}
