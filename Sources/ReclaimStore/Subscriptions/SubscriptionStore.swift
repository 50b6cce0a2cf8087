import Foundation
import Logging
import PostgresNIO
import ReclaimDomain

/// `reclaim.subscriptions`'s row: its columns and their one decoder. The rules of how a notification changes
/// the state live in the domain (``SubscriptionState/apply(_:)``); the worker reads and writes rows through
/// ``SubscriberStore``, a grant locks one through ``GrantStore``.
public enum SubscriptionStore {
    static let columns = """
        bundle_id, environment, original_transaction_id, app_account_token, product_id, subscription_group_id, status,
        auto_renew, auto_renew_product_id, expires_at, expiration_intent, in_billing_retry, grace_period_expires_at,
        eligible_win_back_offer_ids, storefront, first_purchase_at, last_transaction_id, last_notification_type,
        last_subtype, last_signed_date, last_notification_uuid, app_transaction_id, consent_rescinded_at
        """

    /// The one decoder of a subscription row: the first ``columns`` of `row`, in their order.
    static func state(from row: PostgresRow) throws -> SubscriptionState {
        var cells = RowCells(row)
        return try state(from: &cells)
    }

    /// Decodes the subscription's ``columns`` from `cells`, leaving it at the first column after them.
    static func state(from cells: inout RowCells) throws -> SubscriptionState {
        var state = SubscriptionState(
            bundleId: try cells.next(String.self),
            environment: try cells.next(String.self),
            originalTransactionId: try cells.next(String.self)
        )
        state.appAccountToken = try cells.next(UUID?.self)
        state.productId = try cells.next(String?.self)
        state.subscriptionGroupId = try cells.next(String?.self)
        state.status = SubscriptionState.Status(rawValue: try cells.next(String.self)) ?? .unknown
        state.autoRenew = try cells.next(Bool?.self)
        state.autoRenewProductId = try cells.next(String?.self)
        state.expiresAt = try cells.next(Date?.self)
        state.expirationIntent = try cells.next(Int16?.self).map(Int.init)
        state.inBillingRetry = try cells.next(Bool?.self)
        state.gracePeriodExpiresAt = try cells.next(Date?.self)
        state.eligibleWinBackOfferIds = try cells.next([String].self)
        state.storefront = try cells.next(String?.self)
        state.firstPurchaseAt = try cells.next(Date?.self)
        state.lastTransactionId = try cells.next(String?.self)
        state.lastNotificationType = try cells.next(String?.self)
        state.lastSubtype = try cells.next(String?.self)
        state.lastSignedDate = try cells.next(Date?.self)
        state.lastNotificationUUID = try cells.next(UUID?.self)
        state.appTransactionId = try cells.next(String?.self)
        state.consentRescindedAt = try cells.next(Date?.self)
        return state
    }
}

/// A row's cells decoded one after the other, so that a statement returning one table's columns and then
/// others' decodes the first with that table's decoder and goes on from there.
struct RowCells {
    private var cells: PostgresRow.Iterator

    init(_ row: PostgresRow) { cells = row.makeIterator() }

    /// The next cell as `T`.
    mutating func next<T: PostgresDecodable>(_: T.Type) throws -> T {
        guard let cell = cells.next() else { throw PostgresRowMissing(what: "a column of \(T.self): the row has fewer columns") }
        return try cell.decode(T.self)
    }
}
