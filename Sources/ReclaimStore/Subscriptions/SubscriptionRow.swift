import Foundation
import Logging
import PostgresNIO
import ReclaimDomain

/// `reclaim.subscriptions`'s row: its columns and their one decoder. The rules of how a notification changes
/// the state live in the domain (``SubscriptionState/apply(_:)``); the worker reads and writes rows through
/// ``SubscriberStore``, a grant locks one through ``GrantStore``.
public enum SubscriptionRow {
    /// Every column of `reclaim.subscriptions` the state holds, each with its field: the one declaration
    /// (``SubscriptionColumn``). `first_seen_at` and `updated_at` are the database's own.
    static let columns: [SubscriptionColumn] = [
        .key("bundle_id", \.bundleId),
        .key("environment", \.environment),
        .key("original_transaction_id", \.originalTransactionId),
        .uuid("app_account_token", \.appAccountToken),
        .text("product_id", \.productId),
        .text("subscription_group_id", \.subscriptionGroupId),
        .status("status"),
        .bool("auto_renew", \.autoRenew),
        .text("auto_renew_product_id", \.autoRenewProductId),
        .time("expires_at", \.expiresAt),
        .smallint("expiration_intent", \.expirationIntent),
        .bool("in_billing_retry", \.inBillingRetry),
        .time("grace_period_expires_at", \.gracePeriodExpiresAt),
        .texts("eligible_win_back_offer_ids", \.eligibleWinBackOfferIds),
        .text("storefront", \.storefront),
        .time("first_purchase_at", \.firstPurchaseAt),
        .text("last_transaction_id", \.lastTransactionId),
        .text("last_notification_type", \.lastNotificationType),
        .text("last_subtype", \.lastSubtype),
        .time("last_signed_date", \.lastSignedDate),
        .uuid("last_notification_uuid", \.lastNotificationUUID),
        .text("app_transaction_id", \.appTransactionId),
        .time("consent_rescinded_at", \.consentRescindedAt),
        .text("billing_plan_type", \.billingPlanType),
        .smallint("billing_period_number", \.billingPeriodNumber),
        .smallint("total_billing_periods", \.totalBillingPeriods),
        .time("commitment_expires_at", \.commitmentExpiresAt),
        .bigint("commitment_price", \.commitmentPrice),
        .bool("commitment_auto_renew", \.commitmentAutoRenew),
    ]

    /// The columns' names, for a SELECT or RETURNING list; `prefix` qualifies each (`s.`).
    static func columnList(prefix: String = "") -> String {
        columns.map { prefix + $0.name }.joined(separator: ", ")
    }

    /// The one decoder of a subscription row: its ``columns``, found by name.
    static func state(from row: PostgresRow) throws -> SubscriptionState {
        var cells = RowCells(row)
        return try state(from: &cells)
    }

    /// Decodes the subscription's ``columns`` from the next cells of `cells` (as many as there are columns, in any
    /// order: each is found by its name), leaving it at the first column after them.
    static func state(from cells: inout RowCells) throws -> SubscriptionState {
        var byName: [String: PostgresCell] = [:]
        for _ in columns {
            let cell = try cells.nextCell()
            byName[cell.columnName] = cell
        }
        var state = SubscriptionState(bundleId: "", environment: "", originalTransactionId: "")
        for column in columns {
            guard let cell = byName[column.name] else { throw PostgresRowMissing(what: "subscription column \(column.name)") }
            try column.read(&state, cell)
        }
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

    /// The next cell, undecoded.
    mutating func nextCell() throws -> PostgresCell {
        guard let cell = cells.next() else { throw PostgresRowMissing(what: "a column: the row has fewer columns") }
        return cell
    }
}
