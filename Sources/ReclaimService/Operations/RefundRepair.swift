import Foundation
import Logging
import PostgresNIO
import ReclaimDomain
import ReclaimStore

/// `reclaim subscribers repair-refunds`: subscriptions on a 12-month commitment that a refund of a *past* billing
/// period made `refunded` before Reclaim told the two apart (``SubscriptionState/refundsPastPeriod(_:)``). Apple:
/// "the commitment continues unaffected". Each is rebuilt from its stored notifications, in signedDate order, by the
/// rules the worker applies now; where that no longer says `refunded`, the rebuilt state is written (its withdrawal of
/// consent kept). Idempotent: a repaired subscription is no longer `refunded`.
public enum RefundRepair {
    public struct Outcome: Codable, Sendable, Equatable {
        /// `refunded` subscriptions on a commitment plan examined.
        public var examined: Int
        /// Those whose stored notifications say the refund was of a past period: repaired (or, in a dry run, to repair).
        public var repaired: [String]
        public var dryRun: Bool
    }

    public static func run(config: ReclaimConfig, url: DatabaseURL, app: String?, dryRun: Bool, logger: Logger) async throws -> Outcome {
        let verifier = AppleJWSVerifier(trust: try config.rootTrust())
        return try await Database.withDatabase(url, maxConnections: 1, deadlines: .commandLine, logger: logger) { postgres in
            var keys: [SubscriberKey] = []
            for try await (bundle, environment, otid) in try await postgres.query(
                """
                SELECT bundle_id, environment, original_transaction_id FROM reclaim.subscriptions
                WHERE status = 'refunded' AND (billing_plan_type = 'MONTHLY' OR billing_period_number IS NOT NULL)
                  AND (\(app)::text IS NULL OR bundle_id = \(app))
                ORDER BY bundle_id, environment, original_transaction_id
                """,
                logger: logger
            ).decode((String, String, String).self) {
                keys.append(SubscriberKey(bundleId: bundle, environment: environment, originalTransactionId: otid))
            }
            var repaired: [String] = []
            for key in keys {
                let fixed = try await postgres.transaction(logger: logger) { connection -> Bool in
                    let (stored, _) = try await SubscriberStore.lockWithHistory(key, connection: connection, logger: logger)
                    guard stored.status == .refunded else { return false }
                    var rebuilt = SubscriptionState(
                        bundleId: key.bundleId,
                        environment: key.environment,
                        originalTransactionId: key.originalTransactionId
                    )
                    var last: (UUID, Date)?
                    for try await (uuid, payload) in try await connection.query(
                        """
                        SELECT notification_uuid, signed_payload FROM reclaim.notifications
                        WHERE bundle_id = \(key.bundleId) AND environment = \(key.environment)
                          AND original_transaction_id = \(key.originalTransactionId) AND signed_payload <> ''
                        ORDER BY signed_date, received_at
                        """,
                        logger: logger
                    ).decode((UUID, String).self) {
                        let verified = try await verifier.verifyStoredNotification(payload)
                        guard let snapshot = SubscriptionSnapshot(verified, notificationUUID: uuid) else { continue }
                        if rebuilt.apply(snapshot) { last = (uuid, snapshot.signedDate) }
                    }
                    guard let last, rebuilt.status != .refunded, rebuilt.status != .unknown else { return false }
                    guard !dryRun else { return true }
                    // What no notification carries stays as it was.
                    rebuilt.consentRescindedAt = stored.consentRescindedAt
                    rebuilt.appAccountToken = rebuilt.appAccountToken ?? stored.appAccountToken
                    rebuilt.appTransactionId = rebuilt.appTransactionId ?? stored.appTransactionId
                    try await SubscriberStore.persist(
                        [.init(state: rebuilt, stateChanged: true, decisions: [], notificationUUID: last.0, triggeredAt: last.1)],
                        connection: connection,
                        logger: logger
                    )
                    return true
                }
                if fixed { repaired.append("\(key.originalTransactionId) [\(key.bundleId), \(key.environment)]") }
            }
            return Outcome(examined: keys.count, repaired: repaired, dryRun: dryRun)
        }
    }

    /// The command's words.
    public static func text(_ outcome: Outcome) -> String {
        var lines = [
            "\(outcome.examined) refunded subscription\(outcome.examined == 1 ? "" : "s") on a commitment plan examined; "
                + "\(outcome.repaired.count) \(outcome.dryRun ? "would be" : "were") repaired (a past period's refund: the commitment continues)"
        ]
        lines += outcome.repaired.map { "  \($0)" }
        if outcome.dryRun { lines.append("dry run: nothing changed") }
        return lines.joined(separator: "\n")
    }
}
