import Foundation
import PostgresNIO
import ReclaimDomain

/// The one `INSERT INTO reclaim.offers`: campaigns' offers go in with their subscribers' states and decisions
/// (``PersistStatement``, a whole batch of subscribers at once), a grant's with its grant
/// (``GrantStore/create(id:_:idempotencyKey:adminKeyId:offer:connection:logger:)``); both embed this statement, so
/// the columns, their order and their meaning are written once.
///
/// Every column goes in as an array (unnest), one element per offer. Arrays cannot carry NULL through
/// PostgresNIO's encoders, so the nil UUID stands for NULL in `decision_id`, `grant_id`, `app_account_token` and
/// `source_notification_uuid`, '' in `variant_id`, and NULLIF restores it.
enum OfferInsert {
    /// How many parameters ``sql(firstParameter:where:)`` uses, from its first.
    static let parameterCount = 21

    /// An offer with what it is stored beside: its subscriber, and the notification that triggered it (none for a
    /// grant) at its signedDate.
    struct Row: Sendable {
        var offer: NewOffer
        var subscriber: SubscriberKey
        var appAccountToken: UUID?
        var source: UUID?
        var triggeredAt: Date
    }

    /// The statement, its parameters numbered from `p`, inserting the offers for which `condition` holds (SQL
    /// over the alias `o`, e.g. that `o.decision_id` was just inserted).
    static func sql(firstParameter p: Int, where condition: String) -> String {
        func at(_ index: Int) -> String { "$\(p + index)" }
        return """
            INSERT INTO reclaim.offers (
                id, decision_id, grant_id, bundle_id, environment, original_transaction_id, app_account_token, campaign_id,
                source_notification_uuid, triggered_at, priority, product_id, offer_identifier, key_id, nonce, signed_at,
                application_username, storekit1_signature, storekit2_jws, deliverable_until, variant_id)
            SELECT o.id, NULLIF(o.decision_id, '\(nilUUID)'), NULLIF(o.grant_id, '\(nilUUID)'), o.bundle_id, o.environment, o.otid,
                   NULLIF(o.token, '\(nilUUID)'), o.campaign, NULLIF(o.source, '\(nilUUID)'), o.triggered_at, o.priority, o.product, o.offer,
                   o.key, o.nonce, o.signed_at, o.username, o.sk1, o.sk2, o.until, NULLIF(o.variant, '')
            FROM unnest(\(at(0))::uuid[], \(at(1))::uuid[], \(at(2))::uuid[], \(at(3))::text[], \(at(4))::text[], \(at(5))::text[],
                        \(at(6))::uuid[], \(at(7))::text[], \(at(8))::uuid[], \(at(9))::timestamptz[], \(at(10))::bigint[], \(at(11))::text[],
                        \(at(12))::text[], \(at(13))::text[], \(at(14))::uuid[], \(at(15))::timestamptz[], \(at(16))::text[],
                        \(at(17))::text[], \(at(18))::text[], \(at(19))::timestamptz[], \(at(20))::text[])
                 AS o(id, decision_id, grant_id, bundle_id, environment, otid, token, campaign, source, triggered_at, priority, product,
                      offer, key, nonce, signed_at, username, sk1, sk2, until, variant)
            WHERE \(condition)
            """
    }

    /// Appends the ``parameterCount`` values of ``sql(firstParameter:where:)``: each row's columns.
    static func bind(_ rows: [Row], into bindings: inout PostgresBindings) {
        bindings.append(rows.map(\.offer.id))
        bindings.append(rows.map { $0.offer.decisionId ?? nilUUID })
        bindings.append(rows.map { $0.offer.grantId ?? nilUUID })
        bindings.append(rows.map(\.subscriber.bundleId))
        bindings.append(rows.map(\.subscriber.environment))
        bindings.append(rows.map(\.subscriber.originalTransactionId))
        bindings.append(rows.map { $0.appAccountToken ?? nilUUID })
        bindings.append(rows.map(\.offer.campaignId))
        bindings.append(rows.map { $0.source ?? nilUUID })
        bindings.append(rows.map(\.triggeredAt))
        bindings.append(rows.map { Int64($0.offer.priority) })
        bindings.append(rows.map(\.offer.productId))
        bindings.append(rows.map(\.offer.offerIdentifier))
        bindings.append(rows.map(\.offer.signed.storeKit1.keyIdentifier))
        bindings.append(rows.map(\.offer.signed.nonce))
        bindings.append(rows.map(\.offer.signed.signedAt))
        bindings.append(rows.map(\.offer.signed.storeKit1.applicationUsername))
        bindings.append(rows.map(\.offer.signed.storeKit1.signature))
        bindings.append(rows.map(\.offer.signed.storeKit2JWS))
        bindings.append(rows.map(\.offer.deliverableUntil))
        bindings.append(rows.map { $0.offer.variantId ?? "" })
    }

    /// NULL's stand-in in the uuid arrays (no offer, decision, grant, token or notification has the nil UUID).
    static let nilUUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
}
