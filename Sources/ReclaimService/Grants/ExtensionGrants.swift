import Foundation
import Logging
import PostgresNIO
import ReclaimDomain
import ReclaimStore

/// Make-goods (`POST /v1/grants` with `"kind": "extension"`): days added to a subscriber's renewal date by Apple's
/// Extend a Subscription Renewal Date, for an outage or a support case.
///
/// Refused before Apple is asked when Reclaim knows the subscription ineligible (its state, or two extensions in the
/// past 365 days); else stored with a `renewal_extension` job in one transaction, and sent once by a call lane
/// (``RenewalExtensionJobHandler``): never in a batch, paced at the endpoint's limit. The Idempotency-Key is Apple's
/// `requestIdentifier`, so a call sent again after a lost answer is the same request to Apple; the same key again
/// here answers with the grant as it stands (pending, extended or refused).
struct ExtensionGrants: Sendable {
    static let jobKind = "renewal_extension"

    let postgres: Database
    let apps: [String: ReclaimConfig.App]
    var now: @Sendable () -> Date = Date.init

    init(postgres: Database, config: ReclaimConfig, now: @escaping @Sendable () -> Date = Date.init) {
        self.postgres = postgres
        self.apps = Dictionary(config.apps.map { ($0.bundleId, $0) }, uniquingKeysWith: { first, _ in first })
        self.now = now
    }

    enum Outcome: Sendable {
        case created(StoredExtension)
        case existing(StoredExtension)
        case notEligible(String)
        /// The key names an offer grant of this app.
        case keyReused
        /// The app cannot call Apple (no `serverAPI`).
        case noServerAPI
    }

    func grant(_ request: ExtensionGrantRequest, key: String, adminKeyId: UUID, logger: Logger) async throws -> Outcome {
        guard apps[request.bundleId]?.serverAPI != nil else { return .noServerAPI }
        for _ in 0..<2 {
            do {
                return try await postgres.transaction(logger: logger) { connection in
                    try await self.grant(request, key: key, adminKeyId: adminKeyId, connection: connection, logger: logger)
                }
            } catch is GrantService.LostRace {
                continue
            }
        }
        throw GrantService.LostRace()
    }

    private func grant(
        _ request: ExtensionGrantRequest,
        key: String,
        adminKeyId: UUID,
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> Outcome {
        if let existing = try await RenewalExtensionStore.existing(
            bundleId: request.bundleId,
            idempotencyKey: key,
            connection: connection,
            logger: logger
        ) {
            return .existing(existing)
        }
        if try await GrantStore.existing(bundleId: request.bundleId, idempotencyKey: key, connection: connection, logger: logger) != nil {
            return .keyReused
        }
        guard
            let state = try await GrantStore.lockSubscription(
                bundleId: request.bundleId,
                originalTransactionId: request.originalTransactionId,
                appAccountToken: request.appAccountToken,
                environment: request.environment,
                connection: connection,
                logger: logger
            )
        else {
            return .notEligible("no subscription of \(request.bundleId) is known for this subscriber: Apple extends only an active subscription")
        }
        if let rescinded = state.consentRescindedAt {
            return .notEligible(
                "a parent or guardian withdrew consent for the app on \(rescinded.formatted(.iso8601)) (RESCIND_CONSENT): no grant reaches this subscriber"
            )
        }
        let extensions = try await RenewalExtensionStore.extensionsInPastYear(of: state.subscriber, connection: connection, logger: logger)
        if let why = ExtensionGrantRequest.ineligibility(
            status: state.status.rawValue,
            expiresAt: state.expiresAt,
            extensionsInPastYear: extensions,
            now: now()
        ) {
            return .notEligible(why)
        }
        let id = UUID()
        guard
            try await RenewalExtensionStore.create(
                id: id,
                request,
                idempotencyKey: key,
                adminKeyId: adminKeyId,
                subscriber: state.subscriber,
                // Enough attempts for a key refused every 10 minutes through a day, the handler's own bound.
                job: NewJob(kind: Self.jobKind, payload: "{\"extension\":\"\(id.uuidString.lowercased())\"}", maxAttempts: 160),
                connection: connection,
                logger: logger
            )
        else { throw GrantService.LostRace() }
        guard
            let stored = try await RenewalExtensionStore.existing(
                bundleId: request.bundleId,
                idempotencyKey: key,
                connection: connection,
                logger: logger
            )
        else { throw GrantService.LostRace() }
        return .created(stored)
    }
}
