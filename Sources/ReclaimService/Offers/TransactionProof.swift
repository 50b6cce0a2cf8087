import Foundation
import ReclaimDomain

/// The subscription an app proves with a transaction Apple signed (`POST /v1/offers/lookup`), for subscribers whose
/// purchases carry no appAccountToken.
///
/// The app sends StoreKit 2's `VerificationResult<Transaction>.jwsRepresentation`, which Apple documents as "the same
/// as the JWSTransaction that the App Store Server API returns": it is verified like every Apple JWS (the x5c chain to
/// a root trusted for the app, the ES256 signature, the chain's validity at the transaction's `signedDate`), then it
/// must be of the app key's app and of an environment the app accepts. Its age is no reason to refuse: a device keeps
/// the transaction of a subscription that lapsed weeks ago, and that subscriber is whom a win-back offer is for.
///
/// What this proves, and what a replay can get: only Apple and the customer's devices hold the signed transaction,
/// and it names one subscription, so a caller gets that subscription's offers and nobody else's; unlike an
/// appAccountToken, it cannot be guessed or enumerated. A copied transaction replayed by someone else yields those
/// same offers and nothing more: their StoreKit 2 JWS carries `transactionId`, "the unique identifier of any
/// transaction that belongs to the customer" (Apple's App Store Server Library, PromotionalOfferV2SignatureCreator),
/// so the App Store can hold it to that customer; the StoreKit 1 signature of an offer without an appAccountToken
/// names nobody (empty `applicationUsername`), which is why the client purchases with the JWS.
struct TransactionProof: Sendable {
    let verifier: AppleJWSVerifier
    /// The environments each app accepts, by bundle id.
    let environments: [String: Set<String>]

    init(verifier: AppleJWSVerifier, apps: [AppIdentity]) {
        self.verifier = verifier
        self.environments = Dictionary(apps.map { ($0.bundleId, $0.environments) }, uniquingKeysWith: { first, _ in first })
    }

    /// Why a transaction proves nothing for this app; answered as `invalid-transaction`, 401, or 400 when Apple's
    /// signature held but the payload is not one Reclaim can read or store (`malformed`).
    struct Refused: Error, Equatable {
        let reason: String
        var malformed = false
    }

    /// The proven subscription, the appAccountToken the transaction carries, if any, and the transaction.
    func subscriber(
        of signedTransaction: String,
        bundleId: String
    ) async throws(Refused) -> (subscriber: SubscriberKey, appAccountToken: UUID?, transaction: TransactionInfo) {
        let transaction: TransactionInfo
        do {
            transaction = try await verifier.verifyTransaction(signedTransaction)
        } catch  where error.code == .malformed && error.reason.contains("U+0000") {
            throw Refused(reason: "the transaction cannot be stored: \(error.reason)", malformed: true)
        } catch {
            throw Refused(reason: "the transaction is not one Apple signed for a configured app: \(error.reason)")
        }
        guard let transactionBundleId = transaction.bundleId, transactionBundleId == bundleId else {
            throw Refused(
                reason:
                    "the transaction is of app \(LogText.bounded(transaction.bundleId ?? "(none)", limit: 200)), not of this app key's app \(bundleId)"
            )
        }
        guard let environment = transaction.environment?.rawValue, environments[bundleId, default: []].contains(environment) else {
            let named = LogText.bounded(transaction.environment?.rawValue ?? "(none)", limit: 40)
            let accepted = environments[bundleId, default: []].sorted().joined(separator: ", ")
            throw Refused(reason: "the transaction is of environment \(named), which app \(bundleId) does not accept (environments: \(accepted))")
        }
        guard let originalTransactionId = transaction.originalTransactionId, !originalTransactionId.isEmpty else {
            throw Refused(reason: "the transaction carries no originalTransactionId")
        }
        let subscriber = SubscriberKey(bundleId: bundleId, environment: environment, originalTransactionId: originalTransactionId)
        return (subscriber, transaction.appAccountToken.flatMap(UUID.init(uuidString:)), transaction)
    }
}
