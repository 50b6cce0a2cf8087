import Foundation
import PostgresNIO
import ReclaimDomain

/// The one `INSERT INTO reclaim.offers`: campaigns' offers go in with their subscriber's state and decisions
/// (``PersistStatement``), a grant's with its grant (``GrantStore/create(id:_:idempotencyKey:adminKeyId:offer:connection:logger:)``);
/// both embed this statement, so the columns, their order and their meaning are written once.
///
/// The offers of one statement are of one subscriber and one trigger: those go in as scalars, the offers'
/// own columns as arrays (unnest). Arrays cannot carry NULL through PostgresNIO's encoders, so the nil UUID
/// stands for NULL in `decision_id` and `grant_id` (exactly one of the two is set) and NULLIF restores it.
enum OfferInsert {
    /// How many parameters ``sql(firstParameter:where:)`` uses, from its first.
    static let parameterCount = 21

    /// The statement, its parameters numbered from `p`, inserting the offers for which `condition` holds (SQL
    /// over the alias `o`, e.g. that `o.decision_id` was just inserted).
    static func sql(firstParameter p: Int, where condition: String) -> String {
        func at(_ index: Int) -> String { "$\(p + index)" }
        return """
            INSERT INTO reclaim.offers (
                id, decision_id, grant_id, bundle_id, environment, original_transaction_id, app_account_token, campaign_id,
                source_notification_uuid, triggered_at, priority, product_id, offer_identifier, key_id, nonce, signed_at,
                application_username, storekit1_signature, storekit2_jws, deliverable_until, variant_id)
            SELECT o.id, NULLIF(o.decision_id, '\(nilUUID)'), NULLIF(o.grant_id, '\(nilUUID)'), \(at(0)), \(at(1)), \(at(2)), \(at(3)),
                   o.campaign, \(at(4)), \(at(5)), o.priority, o.product, o.offer, o.key, o.nonce, o.signed_at, o.username,
                   o.sk1, o.sk2, o.until, NULLIF(o.variant, '')
            FROM unnest(\(at(6))::uuid[], \(at(7))::uuid[], \(at(8))::uuid[], \(at(9))::text[], \(at(10))::bigint[], \(at(11))::text[],
                        \(at(12))::text[], \(at(13))::text[], \(at(14))::uuid[], \(at(15))::timestamptz[], \(at(16))::text[],
                        \(at(17))::text[], \(at(18))::text[], \(at(19))::timestamptz[], \(at(20))::text[])
                 AS o(id, decision_id, grant_id, campaign, priority, product, offer, key, nonce, signed_at, username, sk1, sk2, until, variant)
            WHERE \(condition)
            """
    }

    /// Appends the ``parameterCount`` values of ``sql(firstParameter:where:)``: the subscriber and trigger the
    /// offers share (taken from the first; an empty list binds empty arrays) and each offer's columns.
    static func bind(
        _ offers: [NewOffer],
        subscriber: SubscriberKey,
        appAccountToken: UUID?,
        source: UUID?,
        triggeredAt: Date,
        into bindings: inout PostgresBindings
    ) {
        bindings.append(subscriber.bundleId)
        bindings.append(subscriber.environment)
        bindings.append(subscriber.originalTransactionId)
        bindings.append(appAccountToken)
        bindings.append(source)
        bindings.append(triggeredAt)
        bindings.append(offers.map(\.id))
        bindings.append(offers.map { $0.decisionId ?? nilUUID })
        bindings.append(offers.map { $0.grantId ?? nilUUID })
        bindings.append(offers.map(\.campaignId))
        bindings.append(offers.map { Int64($0.priority) })
        bindings.append(offers.map(\.productId))
        bindings.append(offers.map(\.offerIdentifier))
        bindings.append(offers.map(\.signed.storeKit1.keyIdentifier))
        bindings.append(offers.map(\.signed.nonce))
        bindings.append(offers.map(\.signed.signedAt))
        bindings.append(offers.map(\.signed.storeKit1.applicationUsername))
        bindings.append(offers.map(\.signed.storeKit1.signature))
        bindings.append(offers.map(\.signed.storeKit2JWS))
        bindings.append(offers.map(\.deliverableUntil))
        bindings.append(offers.map { $0.variantId ?? "" })
    }

    /// NULL's stand-in in the uuid arrays (no offer, decision or grant has the nil UUID as its id).
    private static let nilUUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
}
