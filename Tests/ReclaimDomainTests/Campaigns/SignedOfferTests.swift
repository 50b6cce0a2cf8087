import Foundation
import ReclaimDomain
import ReclaimTestSupport
import Testing

/// `OfferSigner.signOffer`: the subscriber's appAccountToken, however Apple cased it, is signed lowercase.
@Suite(.poolWatchdog) struct SignedOfferTests {
    static let issuerId = "57246542-96fe-1a63-e053-0824d011072a"
    let signer = OfferSigner(key: SigningKey.generate(keyId: "ABCDEFGHIJ"), bundleId: Fixture.bundleId, issuerId: Self.issuerId)

    func snapshot(token: String) -> SubscriptionSnapshot {
        SubscriptionSnapshot(
            bundleId: Fixture.bundleId,
            environment: Fixture.environment,
            originalTransactionId: Fixture.originalTransactionId,
            notificationType: "EXPIRED",
            subtype: "VOLUNTARY",
            signedDate: Fixture.t0,
            notificationUUID: UUID(),
            transaction: TransactionInfo(
                originalTransactionId: Fixture.originalTransactionId,
                transactionId: "2000000000000001",
                appAccountToken: token
            )
        )
    }

    @Test func anUpperCaseTokenIsSignedLowercaseAndVerifies() throws {
        let upper = snapshot(token: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
        let lower = snapshot(token: "e621e1f8-c36c-495a-93fc-0c247a3e6e5f")
        let token = try #require(upper.appAccountToken)
        #expect(token == lower.appAccountToken)

        let nonce = UUID(uuidString: "6BA7B810-9DAD-41D1-80B4-00C04FD430C8")!
        let now = Date(timeIntervalSince1970: 1_700_000_000.25)
        let signed = try signer.signOffer(
            product: Fixture.monthly,
            offer: Fixture.offerIdentifier,
            appAccountToken: token,
            transactionId: "2000000000000001",
            nonce: nonce,
            now: now
        )
        #expect(signed.storeKit1.applicationUsername == "e621e1f8-c36c-495a-93fc-0c247a3e6e5f")
        #expect(signed.storeKit1.nonce == "6ba7b810-9dad-41d1-80b4-00c04fd430c8")
        #expect(signed.storeKit1.keyIdentifier == "ABCDEFGHIJ")
        #expect(signed.storeKit1.timestamp == 1_700_000_000_250)
        #expect(signed.signedAt == now)
        #expect(signed.nonce == nonce)
        #expect(signer.verify(signed.storeKit1, product: Fixture.monthly, offer: Fixture.offerIdentifier))
        #expect(!signer.verify(signed.storeKit1, product: Fixture.yearly, offer: Fixture.offerIdentifier))

        // The upper-case form is not what was signed: an app sending it would be refused.
        var upperCased = signed.storeKit1
        upperCased.applicationUsername = "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"
        #expect(!signer.verify(upperCased, product: Fixture.monthly, offer: Fixture.offerIdentifier))

        #expect(signed.storeKit2JWS.split(separator: ".", omittingEmptySubsequences: false).count == 3)
    }

    @Test func withoutATokenTheApplicationUsernameIsEmpty() throws {
        let signed = try signer.signOffer(
            product: Fixture.monthly,
            offer: Fixture.offerIdentifier,
            appAccountToken: nil,
            transactionId: nil,
            nonce: UUID(),
            now: Fixture.t0
        )
        #expect(signed.storeKit1.applicationUsername == "")
        #expect(signer.verify(signed.storeKit1, product: Fixture.monthly, offer: Fixture.offerIdentifier))
    }
}
