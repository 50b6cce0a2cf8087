import Foundation
import Logging
import PostgresNIO
import ReclaimDomain
import ReclaimStore

/// Hands a subscriber's deliverable offers to their app and marks them delivered.
///
/// Apple accepts each nonce once, so a signature is handed out at most once: the stored (pre-generated)
/// signature goes out on the first delivery if it is younger than `freshFor`; every other delivery is signed
/// anew with a new nonce. The new signature is stored and the delivery recorded in the same transaction, which
/// commits before the answer is sent.
struct OfferDelivery: Sendable {
    let postgres: Database
    let signers: [String: OfferSigner]
    /// Stored signatures older than this are not handed out (the app may keep an offer for a while before use).
    var freshFor: TimeInterval = 3600
    var now: @Sendable () -> Date = Date.init
    let metrics = CampaignMetrics()

    func deliver(bundleId: String, appAccountToken: UUID, logger: Logger) async throws -> [StoredOffer] {
        // Most subscribers have no offer: one indexed read, no transaction, no lock.
        let any = try await postgres.withConnection(logger: logger) {
            try await OfferStore.hasDeliverable(bundleId: bundleId, appAccountToken: appAccountToken, connection: $0, logger: logger)
        }
        guard any else { return [] }
        let delivered = try await postgres.transaction(logger: logger) { connection in
            let offers = try await OfferStore.lockDeliverable(
                bundleId: bundleId,
                appAccountToken: appAccountToken,
                connection: connection,
                logger: logger
            )
            var delivered: [StoredOffer] = []
            for var offer in offers {
                let time = now()
                guard let signer = signers[offer.bundleId] else { continue }  // app no longer configured
                // After a key rotation nothing signed by the previous key is handed out: its signatures are
                // re-made with the current key on their first delivery.
                if offer.signatureDelivered || offer.signedAt < time.addingTimeInterval(-freshFor) || offer.keyId != signer.key.keyId {
                    offer.replaceSignatures(with: try signer.resign(offer, now: time))
                    metrics.signed(purpose: "delivery")
                }
                try await OfferStore.markDelivered(offer, connection: connection, logger: logger)
                delivered.append(offer)
            }
            return delivered
        }
        metrics.delivered(delivered)
        return delivered
    }
}
