import Foundation
import ReclaimDomain
import ReclaimTestSupport
import Testing

/// Applying notifications to a subscription's state: newest wins, late and replayed ones change nothing.
@Suite(.poolWatchdog) struct SubscriptionStateTests: CampaignFactories {
    static let token = "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"

    func snapshot(
        _ type: String = "DID_RENEW",
        _ subtype: String? = nil,
        at signedDate: Date,
        appleStatus: Int64? = 1,
        transaction: TransactionInfo? = nil,
        renewalInfo: RenewalInfo? = nil
    ) -> SubscriptionSnapshot {
        SubscriptionSnapshot(
            bundleId: Fixture.bundleId,
            environment: Fixture.environment,
            originalTransactionId: Fixture.originalTransactionId,
            notificationType: type,
            subtype: subtype,
            signedDate: signedDate,
            notificationUUID: UUID(),
            appleStatus: appleStatus,
            transaction: transaction,
            renewalInfo: renewalInfo
        )
    }

    func transaction(id: String, product: String = Fixture.monthly, storefront: String = "USA", token: String? = nil) -> TransactionInfo {
        TransactionInfo(
            originalTransactionId: Fixture.originalTransactionId,
            transactionId: id,
            productId: product,
            originalPurchaseDate: 1_650_000_000_000,
            expiresDate: 1_702_592_000_000,
            appAccountToken: token,
            storefront: storefront
        )
    }

    /// A state with one renewal applied at t0.
    func renewed() -> SubscriptionState {
        var subscription = SubscriptionState(
            bundleId: Fixture.bundleId,
            environment: Fixture.environment,
            originalTransactionId: Fixture.originalTransactionId
        )
        subscription.apply(
            snapshot(
                at: Fixture.t0,
                transaction: transaction(id: "2000000000000001"),
                renewalInfo: RenewalInfo(productId: Fixture.monthly, autoRenewStatus: 1)
            )
        )
        return subscription
    }

    @Test func aNewerSnapshotIsApplied() {
        var subscription = renewed()
        let applied = subscription.apply(
            snapshot(
                "EXPIRED",
                "VOLUNTARY",
                at: Fixture.days(30),
                appleStatus: 2,
                transaction: transaction(id: "2000000000000002", storefront: "CAN"),
                renewalInfo: RenewalInfo(expirationIntent: 1, productId: Fixture.monthly, autoRenewStatus: 0, eligibleWinBackOfferIds: ["wb1"])
            )
        )
        #expect(applied)
        #expect(subscription.lastSignedDate == Fixture.days(30))
        #expect(subscription.lastNotificationType == "EXPIRED")
        #expect(subscription.lastSubtype == "VOLUNTARY")
        #expect(subscription.status == .expired)
        #expect(subscription.autoRenew == false)
        #expect(subscription.expirationIntent == 1)
        #expect(subscription.storefront == "CAN")
        #expect(subscription.lastTransactionId == "2000000000000002")
        #expect(subscription.eligibleWinBackOfferIds == ["wb1"])
        #expect(subscription.firstPurchaseAt == Date(unixMilliseconds: 1_650_000_000_000))
    }

    @Test(arguments: [
        // (seconds the snapshot is signed after the applied one, applied?)
        (-86_400.0, false),
        (-0.001, false),
        (0.0, false),
        (0.001, true),
        (86_400.0, true),
    ])
    func anOlderOrDuplicatedSnapshotChangesNothing(signedAfter seconds: Double, applied: Bool) {
        let before = renewed()
        var subscription = before
        let result = subscription.apply(
            snapshot(
                "EXPIRED",
                "BILLING_RETRY",
                at: Fixture.seconds(seconds),
                appleStatus: 2,
                transaction: transaction(id: "2000000000000003", product: Fixture.yearly, storefront: "FRA", token: Self.token),
                renewalInfo: RenewalInfo(expirationIntent: 2, productId: Fixture.yearly, autoRenewStatus: 0)
            )
        )
        #expect(result == applied, "signed \(seconds)s after")
        if applied {
            #expect(subscription != before)
            #expect(subscription.lastSignedDate == Fixture.seconds(seconds))
        } else {
            #expect(subscription == before, "signed \(seconds)s after")
        }
    }

    @Test func theSameNotificationDeliveredTwiceIsAppliedOnce() {
        var subscription = SubscriptionState(
            bundleId: Fixture.bundleId,
            environment: Fixture.environment,
            originalTransactionId: Fixture.originalTransactionId
        )
        let once = snapshot(at: Fixture.t0, transaction: transaction(id: "2000000000000001"))
        let first = subscription.apply(once)
        #expect(first)
        let afterOnce = subscription
        let second = subscription.apply(once)
        #expect(!second)
        #expect(subscription == afterOnce)
    }

    @Test func aLateNotificationIsStaleForTheCampaigns() throws {
        var subscription = renewed()
        // The newer EXPIRED arrived first; the older one then arrives late.
        let newer = subscription.apply(snapshot("EXPIRED", "VOLUNTARY", at: Fixture.days(10), appleStatus: 2))
        #expect(newer)
        let late = snapshot("EXPIRED", "VOLUNTARY", at: Fixture.days(9), appleStatus: 2)
        let older = subscription.apply(late)
        #expect(!older)
        let decision = try decide(campaign(), state: subscription, event: SubscriptionEvent(late), now: Fixture.days(10))
        Expected.skipped("stale").check(decision)
    }

    @Test(arguments: [
        // (where Apple put the token, how)
        ("transaction", "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"),
        ("transaction", "e621e1f8-c36c-495a-93fc-0c247a3e6e5f"),
        ("renewal info", "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"),
        ("renewal info", "e621e1f8-c36c-495a-93fc-0C247A3E6E5F"),
    ])
    func anAppAccountTokenIsTheSameUUIDWhateverItsCase(place: String, token: String) {
        let inTransaction = place == "transaction"
        let snap = snapshot(
            at: Fixture.days(1),
            transaction: inTransaction ? transaction(id: "2000000000000004", token: token) : nil,
            renewalInfo: inTransaction ? nil : RenewalInfo(productId: Fixture.monthly, appAccountToken: token)
        )
        let expected = UUID(uuidString: "e621e1f8-c36c-495a-93fc-0c247a3e6e5f")
        #expect(expected != nil)
        #expect(snap.appAccountToken == expected)
        var subscription = renewed()
        let applied = subscription.apply(snap)
        #expect(applied)
        #expect(subscription.appAccountToken == expected)
        #expect(subscription.appAccountToken?.uuidString.lowercased() == "e621e1f8-c36c-495a-93fc-0c247a3e6e5f")
    }

    @Test(arguments: ["not-a-uuid", "", "E621E1F8-C36C-495A-93FC"])
    func anAppAccountTokenThatIsNotAUUIDIsIgnored(token: String) {
        var subscription = renewed()
        let snap = snapshot(at: Fixture.days(1), transaction: transaction(id: "2000000000000005", token: token))
        #expect(snap.appAccountToken == nil)
        let applied = subscription.apply(snap)
        #expect(applied)
        #expect(subscription.appAccountToken == nil)
    }

    @Test func aTokenIsNotErasedByALaterNotificationWithout() {
        var subscription = renewed()
        let withToken = subscription.apply(snapshot(at: Fixture.days(1), transaction: transaction(id: "2000000000000006", token: Self.token)))
        #expect(withToken)
        let withoutToken = subscription.apply(snapshot(at: Fixture.days(2), transaction: transaction(id: "2000000000000007")))
        #expect(withoutToken)
        #expect(subscription.appAccountToken == UUID(uuidString: Self.token))
    }

    @Test func aFreshStateHasNoSubscription() {
        let fresh = SubscriptionState(
            bundleId: Fixture.bundleId,
            environment: Fixture.environment,
            originalTransactionId: Fixture.originalTransactionId
        )
        #expect(!fresh.hasOrHadSubscription)
        #expect(fresh.lastSignedDate == nil)
        #expect(fresh.status == .unknown)
        #expect(renewed().hasOrHadSubscription)
    }
}
