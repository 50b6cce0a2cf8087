import Foundation
import PostgresNIO
import ReclaimDomain

/// The one `INSERT INTO reclaim.offers`: campaigns' offers go in with their subscribers' states and decisions
/// (``PersistStatement``, a whole batch of subscribers at once), a grant's with its grant
/// (``GrantStore/create(id:_:idempotencyKey:adminKeyId:for:offer:triggeredAt:connection:logger:)``); both embed
/// ``insert(where:)``, so the columns, their order and their meaning are written once, in ``columns``.
///
/// Every column goes in as an array (unnest), one element per offer; NULL in `decision_id`, `grant_id`,
/// `app_account_token`, `source_notification_uuid` and `variant_id` travels as a stand-in (``UnnestColumns``).
enum OfferInsert {
    /// An offer with what it is stored beside: its subscriber, and the notification that triggered it (none for a
    /// grant) at its signedDate.
    struct Row: Sendable {
        var offer: NewOffer
        var subscriber: SubscriberKey
        var appAccountToken: UUID?
        var source: UUID?
        var triggeredAt: Date
    }

    static let columns = UnnestColumns<Row>(
        alias: "o",
        [
            .init("id", "uuid") { $0.offer.id },
            .nullable("decision_id") { $0.offer.decisionId },
            .nullable("grant_id") { $0.offer.grantId },
            .init("bundle_id", "text") { $0.subscriber.bundleId },
            .init("environment", "text") { $0.subscriber.environment },
            .init("original_transaction_id", "text") { $0.subscriber.originalTransactionId },
            .nullable("app_account_token") { $0.appAccountToken },
            .init("campaign_id", "text") { $0.offer.campaignId },
            .nullable("source_notification_uuid") { $0.source },
            .init("triggered_at", "timestamptz") { $0.triggeredAt },
            .init("priority", "bigint") { Int64($0.offer.priority) },
            .init("product_id", "text") { $0.offer.productId },
            .init("offer_identifier", "text") { $0.offer.offerIdentifier },
            .init("key_id", "text") { $0.offer.signed.storeKit1.keyIdentifier },
            .init("nonce", "uuid") { $0.offer.signed.nonce },
            .init("signed_at", "timestamptz") { $0.offer.signed.signedAt },
            .init("application_username", "text") { $0.offer.signed.storeKit1.applicationUsername },
            .init("storekit1_signature", "text") { $0.offer.signed.storeKit1.signature },
            .init("storekit2_jws", "text") { $0.offer.signed.storeKit2JWS },
            .init("deliverable_until", "timestamptz") { $0.offer.deliverableUntil },
            .nullable("variant_id") { $0.offer.variantId },
            .nullable("cancel_flow_decision_id") { $0.offer.cancelFlowDecisionId },
        ]
    )

    /// The statement, inserting the rows' offers for which `condition` holds (SQL over the alias `o`, e.g. that
    /// `o.decision_id` was just inserted).
    static func insert(where condition: String) -> SQLFragment<[Row]> {
        "\(columns.insert(into: "reclaim.offers"))\nWHERE \(unescaped: condition)"
    }
}
