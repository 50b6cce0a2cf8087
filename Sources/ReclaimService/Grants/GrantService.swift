import Foundation
import Logging
import PostgresNIO
import ReclaimDomain
import ReclaimStore

/// Referral and incentive grants (`POST /v1/grants`): an offer for one named subscriber, issued through the
/// ``OfferIssuer`` like a campaign's.
///
/// The subscriber must have or have had a subscription in the app, as Apple requires of promotional offers
/// (else ``Outcome/notEligible(_:)``, and nothing is stored). The grant's offer replaces the subscriber's live
/// offer (Apple allows one at a time); campaigns never supersede it (``priority``). The same Idempotency-Key
/// again finds the first grant.
public struct GrantService: Sendable {
    let postgres: Database
    let issuer: OfferIssuer
    /// Each app's discount budget (`apps[].discountBudget`), by bundle id.
    var budgets: [String: DiscountBudget] = [:]
    var now: @Sendable () -> Date = Date.init

    /// A grant ranks above every campaign: a campaign's decision never withdraws it.
    static let priority = Int(Int32.max)

    public enum Outcome: Sendable {
        /// Granted now.
        case created(StoredGrant)
        /// Granted earlier with this Idempotency-Key (the caller compares the requests).
        case existing(StoredGrant)
        case notEligible(String)
        /// The Idempotency-Key names an extension grant of this app.
        case keyReused
        /// The app's discount budget is spent for the subscriber (and the request did not override it).
        case overBudget(String)
        /// The app has no signing key.
        case unknownApp
    }

    /// A concurrent request with the same key committed first: run again, and find its grant. Thrown to the
    /// caller when that happened twice (the database does not answer as it should: 503).
    struct LostRace: Error {}

    /// Grants `grant` once per Idempotency-Key `key`, in one transaction (retried once when a concurrent request
    /// with the same key won).
    func grant(_ grant: GrantRequest, key: String, adminKeyId: UUID, logger: Logger) async throws -> Outcome {
        guard issuer.signers[grant.bundleId] != nil else { return .unknownApp }
        for _ in 0..<2 {
            do {
                return try await postgres.transaction(logger: logger) { connection in
                    try await self.grant(grant, key: key, adminKeyId: adminKeyId, connection: connection, logger: logger)
                }
            } catch is LostRace {
                continue
            }
        }
        // Lost twice: the winner's grant is committed, yet not found; the database is not answering as it should.
        throw LostRace()
    }

    private func grant(_ grant: GrantRequest, key: String, adminKeyId: UUID, connection: PostgresConnection, logger: Logger) async throws -> Outcome {
        if let existing = try await GrantStore.existing(bundleId: grant.bundleId, idempotencyKey: key, connection: connection, logger: logger) {
            return .existing(existing)
        }
        if try await RenewalExtensionStore.existing(bundleId: grant.bundleId, idempotencyKey: key, connection: connection, logger: logger) != nil {
            return .keyReused
        }
        guard let state = try await GrantStore.lockSubscription(for: grant, connection: connection, logger: logger),
            state.hasOrHadSubscription
        else {
            return .notEligible(
                "no subscription of \(grant.bundleId) is known for this subscriber; Apple offers promotional offers only to subscribers who have or had one"
            )
        }
        if let rescinded = state.consentRescindedAt {
            return .notEligible(
                "a parent or guardian withdrew consent for the app on \(rescinded.formatted(.iso8601)) (RESCIND_CONSENT): no offer reaches this subscriber"
            )
        }
        if let budget = budgets[grant.bundleId], !grant.overrideDiscountBudget,
            let reason = budget.forPlan(state.billingPlanType).exhausted(
                by: try await OfferStore.discounts(of: state.subscriber, connection: connection, logger: logger),
                at: now()
            )
        {
            return .overBudget(reason)
        }
        let id = UUID()
        // A lapsed offer the sweep has not ended yet still holds the subscriber's one live place: end it first.
        issuer.metrics.expired(try await OfferStore.expireLapsed(of: state.subscriber, connection: connection, logger: logger))
        // A paused campaign's offer too: it is still the subscriber's live offer (the database allows one).
        if let live = try await OfferStore.liveOffer(of: state.subscriber, includingPaused: true, connection: connection, logger: logger) {
            try await issuer.withdraw(live.id, reason: "superseded by grant \(id.uuidString.lowercased())", connection: connection, logger: logger)
        }
        let time = now()
        let offer = try issuer.issue(
            .init(
                subscriber: state,
                campaignId: grant.campaign,
                productId: grant.productId,
                offerIdentifier: grant.offerIdentifier,
                priority: Self.priority,
                deliverableUntil: time.addingTimeInterval(TimeInterval(grant.deliverableFor)),
                grantId: id
            ),
            purpose: "grant"
        )
        guard
            try await GrantStore.create(
                id: id,
                grant,
                idempotencyKey: key,
                adminKeyId: adminKeyId,
                for: state,
                offer: offer,
                triggeredAt: time,
                connection: connection,
                logger: logger
            )
        else { throw LostRace() }
        return .created(
            StoredGrant(
                id: id,
                request: grant,
                offerId: offer.id,
                originalTransactionId: state.originalTransactionId,
                environment: state.environment,
                deliverableUntil: offer.deliverableUntil,
                createdAt: time,
                requestSHA256: grant.fingerprint
            )
        )
    }
}
