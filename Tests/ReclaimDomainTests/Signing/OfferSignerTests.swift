import Foundation
import ReclaimDomain
import ReclaimTestSupport
import Testing

/// The facade the CLI and workers call.
@Suite(.poolWatchdog) struct OfferSignerTests {
    @Test func storeKit1SignsAndVerifiesItsOwnSignature() throws {
        let signer = OfferSigner(key: try SigningFixtures.signingKey(), bundleId: "com.example.reclaim", issuerId: nil)
        let nonce = UUID(uuidString: "6BA7B810-9DAD-41D1-80B4-00C04FD430C8")!
        let signed = try signer.storeKit1(
            product: "com.example.pro.monthly",
            offer: "winback50",
            applicationUsername: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F",
            nonce: nonce,
            timestamp: 1_700_000_000_000
        )
        #expect(signed.applicationUsername == "e621e1f8-c36c-495a-93fc-0c247a3e6e5f")
        #expect(signer.verify(signed, product: "com.example.pro.monthly", offer: "winback50"))
        #expect(!signer.verify(signed, product: "com.example.pro.yearly", offer: "winback50"))
        #expect(!signer.verify(signed, product: "com.example.pro.monthly", offer: "winback60"))

        var altered = signed
        altered.timestamp += 1
        #expect(!signer.verify(altered, product: "com.example.pro.monthly", offer: "winback50"))
    }

    @Test func dateConvenienceUsesTheCallersClock() throws {
        let signer = OfferSigner(key: try SigningFixtures.signingKey(), bundleId: "com.example.reclaim", issuerId: nil)
        let signed = try signer.storeKit1(
            product: "p",
            offer: "o",
            applicationUsername: "",
            nonce: UUID(),
            now: Date(timeIntervalSince1970: 1_700_000_000.5)
        )
        #expect(signed.timestamp == 1_700_000_000_500)
        #expect(signer.verify(signed, product: "p", offer: "o"))
    }

    @Test func storeKit1ValidationErrorsPassThrough() throws {
        let signer = OfferSigner(key: try SigningFixtures.signingKey(), bundleId: "com.example.reclaim", issuerId: nil)
        do {
            _ = try signer.storeKit1(product: "p", offer: "o", applicationUsername: "", nonce: UUID(), timestamp: 1_700_000_000)
            Issue.record("accepted a timestamp in seconds")
        } catch {
            #expect(error.code == .timestampNotMilliseconds)
        }
    }
}
