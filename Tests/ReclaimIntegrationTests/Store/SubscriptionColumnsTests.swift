import Foundation
import PostgresNIO
import ReclaimDomain
import ReclaimTestSupport
import Testing

@testable import ReclaimStore

/// Issue 64: every field of a subscription's state is declared once (``SubscriptionRow/columns``) and survives the
/// worker's write and the reads: a field added to the state without its column fails here.
@Suite("Subscription state: every field written and read back through its one column declaration", .poolWatchdog)
struct SubscriptionColumnsTests {
    let logger = TestPostgres.logger

    /// A state whose every field holds a value of its own (no two texts alike, times whole seconds apart).
    static func everyFieldSet() -> SubscriptionState {
        var state = SubscriptionState(bundleId: "com.example.columns", environment: "Sandbox", originalTransactionId: "2000000000000777")
        state.appAccountToken = UUID(uuidString: "0a0b0c0d-0000-4000-8000-000000000001")
        state.productId = "com.example.monthly"
        state.subscriptionGroupId = "21000001"
        state.status = .gracePeriod
        state.autoRenew = false
        state.autoRenewProductId = "com.example.yearly"
        state.expiresAt = Date(timeIntervalSince1970: 1_800_000_001)
        state.expirationIntent = 4
        state.inBillingRetry = true
        state.gracePeriodExpiresAt = Date(timeIntervalSince1970: 1_800_000_002)
        state.eligibleWinBackOfferIds = ["WINBACK1", "WINBACK2"]
        state.storefront = "FRA"
        state.firstPurchaseAt = Date(timeIntervalSince1970: 1_700_000_003)
        state.lastTransactionId = "2000000000000999"
        state.lastNotificationType = "DID_FAIL_TO_RENEW"
        state.lastSubtype = "GRACE_PERIOD"
        state.lastSignedDate = Date(timeIntervalSince1970: 1_800_000_004)
        state.lastNotificationUUID = UUID(uuidString: "0a0b0c0d-0000-4000-8000-000000000002")
        state.appTransactionId = "704000000000000005"
        state.consentRescindedAt = Date(timeIntervalSince1970: 1_800_000_006)
        state.billingPlanType = "MONTHLY"
        state.billingPeriodNumber = 3
        state.totalBillingPeriods = 12
        state.commitmentExpiresAt = Date(timeIntervalSince1970: 1_800_000_007)
        state.commitmentPrice = 119_880
        state.commitmentAutoRenew = false
        return state
    }

    @Test("a state with every field set reads back equal after the worker's write; the fixture leaves no field unset")
    func roundTrip() async throws {
        let state = Self.everyFieldSet()
        // Every stored property of the fixture holds a value: a field added to the state must be set here too.
        for child in Mirror(reflecting: state).children {
            let unset =
                (child.value as? any OptionalProtocol)?.isNil == true || (child.value as? [String])?.isEmpty == true
                || (child.value as? SubscriptionState.Status) == .unknown
            #expect(!unset, "the fixture leaves \(child.label ?? "?") unset")
        }
        #expect(SubscriptionRow.columns.count == Mirror(reflecting: state).children.count, "one column per field")
        try await withTestDatabase { client, _ in
            let write = SubscriberStore.Write(state: state, stateChanged: true, decisions: [], notificationUUID: UUID(), triggeredAt: Date())
            let read = try await client.transaction(logger: logger) { connection in
                try await SubscriberStore.persist([write], connection: connection, logger: logger)
                return try await SubscriberStore.lockWithHistory(state.subscriber, connection: connection, logger: logger).0
            }
            #expect(read == state)
            // Each column on its own, so a difference names its field.
            for column in SubscriptionRow.columns {
                #expect(column.value(read) == column.value(state), "\(column.name)")
            }
        }
    }
}

/// Whether an `Any` holding an optional holds nil.
private protocol OptionalProtocol { var isNil: Bool { get } }
extension Optional: OptionalProtocol { var isNil: Bool { self == nil } }
