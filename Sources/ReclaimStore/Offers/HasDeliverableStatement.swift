import Foundation
import PostgresNIO

/// ``OfferStore/hasDeliverable(bundleId:appAccountToken:connection:logger:)``'s query, prepared once per
/// connection: it runs on every app launch, and parsing and planning it anew cost more than running it.
struct HasDeliverableStatement: PostgresPreparedStatement {
    static let sql = """
        SELECT 1 FROM reclaim.offers
        WHERE app_account_token = $1 AND bundle_id = $2 AND state IN ('ready', 'delivered') AND deliverable_until > now()
          AND NOT EXISTS (SELECT 1 FROM reclaim.campaigns paused WHERE paused.id = offers.campaign_id AND paused.paused_at IS NOT NULL)
        LIMIT 1
        """
    typealias Row = Int

    let bundleId: String
    let appAccountToken: UUID

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(appAccountToken)
        bindings.append(bundleId)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Int { try row.decode(Int.self) }
}
