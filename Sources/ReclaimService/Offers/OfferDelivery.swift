import Foundation
import Logging
import Metrics
import PostgresNIO
import ReclaimDomain
import ReclaimStore

/// Hands a subscriber's deliverable offers to their app and marks them delivered; records what the app did with
/// them.
///
/// Apple accepts each nonce once, so a signature is handed out at most once: the stored (pre-generated)
/// signature goes out on the first delivery if it is younger than ``SignaturePolicy/freshFor``; every other delivery is signed
/// anew with a new nonce. The new signature is stored and the delivery recorded in the same transaction, which
/// commits before the answer is sent.
struct OfferDelivery: Sendable {
    let postgres: Database
    /// Decides, by its ``SignaturePolicy``, whether a stored signature may go out, and signs anew when not.
    let issuer: OfferIssuer
    let metrics = CampaignMetrics()
    /// Who has a live offer, in memory: most launches are answered "none" without a query.
    var liveOffers = LiveOfferIndex()
    /// The apps stopped (`reclaim stop`): their subscribers get no offer and no code, as a subscriber with none.
    let stops: AppStops
    let answeredByIndex = Counter(label: "reclaim_offer_lookups_total", dimensions: [("answered_by", "index")])
    let answeredByDatabase = Counter(label: "reclaim_offer_lookups_total", dimensions: [("answered_by", "database")])

    /// Whose offers: an app user named by the appAccountToken the app sets on its purchases, or a subscription
    /// proven by a transaction Apple signed (``TransactionProof``), for subscribers without one.
    enum Recipient: Sendable {
        case appUser(bundleId: String, appAccountToken: UUID)
        case subscription(SubscriberKey)

        var bundleId: String {
            switch self {
            case .appUser(let bundleId, _): bundleId
            case .subscription(let key): key.bundleId
            }
        }
    }

    func deliver(to recipient: Recipient, logger: Logger) async throws -> [StoredOffer] {
        if await stops.stop(of: recipient.bundleId, logger: logger) != nil {
            AppStops.held("offers", bundleId: recipient.bundleId)
            return []
        }
        if case .appUser(let bundleId, let appAccountToken) = recipient {
            // Most launches find no offer: the index says so in memory when it is in sync (an answer that misses no
            // offer committed more than LiveOfferIndex.staleness ago); otherwise one indexed read, no transaction.
            switch liveOffers.mayHaveOffer(bundleId: bundleId, appAccountToken: appAccountToken) {
            case false?:
                answeredByIndex.increment()
                return []
            case true?:
                answeredByDatabase.increment()  // named by the index: straight to the transaction below
            case nil:
                answeredByDatabase.increment()
                let any = try await postgres.withConnection(logger: logger) {
                    try await OfferStore.hasDeliverable(bundleId: bundleId, appAccountToken: appAccountToken, connection: $0, logger: logger)
                }
                guard any else { return [] }
            }
        }
        let delivered = try await postgres.transaction(logger: logger) { connection in
            let offers: [StoredOffer]
            switch recipient {
            case .appUser(let bundleId, let appAccountToken):
                offers = try await OfferStore.lockDeliverable(
                    bundleId: bundleId,
                    appAccountToken: appAccountToken,
                    connection: connection,
                    logger: logger
                )
            case .subscription(let subscriber):
                offers = try await OfferStore.lockDeliverable(subscriber: subscriber, connection: connection, logger: logger)
            }
            var delivered: [StoredOffer] = []
            for var offer in offers {
                guard try issuer.signForDelivery(&offer) != nil else { continue }  // app no longer configured
                try await OfferStore.markDelivered(offer, connection: connection, logger: logger)
                delivered.append(offer)
            }
            return delivered
        }
        metrics.delivered(delivered)
        return delivered
    }

    /// The recipient's offer codes, for a client that asked for them (one indexed statement that also marks them
    /// delivered; the live-offer index knows promotional offers only, so it is not asked).
    func deliverCodes(to recipient: OfferCodeStore.Recipient, logger: Logger) async throws -> [OfferCodeStore.DeliveredCode] {
        if await stops.stop(of: recipient.bundleId, logger: logger) != nil {
            AppStops.held("offer_codes", bundleId: recipient.bundleId)
            return []
        }
        return try await postgres.withConnection(logger: logger) {
            try await OfferCodeStore.deliver(to: recipient, connection: $0, logger: logger)
        }
    }

    /// Records what the app did with one of its offers (``OfferRequestInput/events``), once per event. A failed purchase
    /// is logged with StoreKit's error as well: an offer identifier App Store Connect does not know shows up here.
    func recordEvent(
        _ event: OfferRequestInput.EventBody,
        offerId: UUID,
        bundleId: String,
        logger: Logger
    ) async throws -> OfferStore.EventOutcome {
        let outcome = try await postgres.withConnection(logger: logger) {
            try await OfferStore.recordEvent(event.event, error: event.error, offerId: offerId, bundleId: bundleId, connection: $0, logger: logger)
        }
        if event.event == OfferRequestInput.failedEvent, outcome == .recorded {
            logger.notice(
                "the app reports a purchase with an offer that failed",
                metadata: ["offer": "\(offerId)", "bundleId": "\(bundleId)", "error": "\(event.error ?? "(none given)")"]
            )
        }
        return outcome
    }
}
