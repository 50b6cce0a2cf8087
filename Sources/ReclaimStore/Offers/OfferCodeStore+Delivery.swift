import Foundation
import Logging
import PostgresNIO
import ReclaimDomain

/// The codes an app that asks for them is handed (`GET /v1/offers?include=offerCodes`).
extension OfferCodeStore {
    /// A code as the app is handed it (`GET /v1/offers?include=offerCodes`).
    public struct DeliveredCode: Sendable, Equatable {
        /// The decision that issued it: the id the app records events with.
        public var id: UUID
        public var campaignId: String
        public var environment: String
        public var productId: String
        /// The offer's reference name.
        public var offer: String
        public var code: String
        public var redemptionURL: String
        /// The earlier of the code's expiry and the decision's delivery window.
        public var expiresAt: Date
    }

    /// Whose codes: an app user by token, or a proven subscription.
    public enum Recipient: Sendable {
        case appUser(bundleId: String, appAccountToken: UUID)
        case subscription(SubscriberKey)

        public var bundleId: String {
            switch self {
            case .appUser(let bundleId, _): bundleId
            case .subscription(let key): key.bundleId
            }
        }
    }

    /// The recipient's codes that are issued, not redeemed, unexpired and inside their decision's delivery window, of
    /// campaigns not paused; marked delivered (first time) in the same statement.
    public static func deliver(to recipient: Recipient, connection: PostgresConnection, logger: Logger) async throws -> [DeliveredCode] {
        let (bundleId, token, environment, originalTransactionId): (String, UUID?, String?, String?) =
            switch recipient {
            case .appUser(let bundleId, let token): (bundleId, token, nil, nil)
            case .subscription(let key): (key.bundleId, nil, key.environment, key.originalTransactionId)
            }
        var codes: [DeliveredCode] = []
        for try await row in try await connection.query(
            """
            UPDATE reclaim.offer_codes c SET delivered_at = coalesce(c.delivered_at, now())
            FROM reclaim.campaign_decisions d, reclaim.offer_code_pools p
            WHERE d.id = c.decision_id
              AND p.bundle_id = c.bundle_id AND p.environment = c.environment AND p.offer_reference_name = c.offer_reference_name
              AND c.bundle_id = \(bundleId) AND c.decision_id IS NOT NULL AND c.redeemed_at IS NULL
              AND (\(token)::uuid IS NULL OR c.app_account_token = \(token))
              AND (\(originalTransactionId)::text IS NULL OR (c.environment = \(environment) AND c.original_transaction_id = \(originalTransactionId)))
              AND c.expires_at > now() AND c.deliverable_until > now()
              AND NOT EXISTS (SELECT 1 FROM reclaim.campaigns k WHERE k.id = d.campaign_id AND k.paused_at IS NOT NULL)
            RETURNING d.id, d.campaign_id, c.environment, p.product_id, c.offer_reference_name, c.code, p.redemption_url,
                      least(c.expires_at, c.deliverable_until)
            """,
            logger: logger
        ).decode((UUID, String, String, String, String, String, String, Date).self) {
            codes.append(
                DeliveredCode(
                    id: row.0,
                    campaignId: row.1,
                    environment: row.2,
                    productId: row.3,
                    offer: row.4,
                    code: row.5,
                    redemptionURL: OfferCodes.redemptionURL(template: row.6, code: row.5),
                    expiresAt: row.7
                )
            )
        }
        return codes.sorted { $0.expiresAt < $1.expiresAt }
    }
}
