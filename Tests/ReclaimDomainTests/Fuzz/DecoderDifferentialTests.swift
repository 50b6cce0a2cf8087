import Foundation
import ReclaimTestSupport
import Testing

@testable import ReclaimDomain

/// Differential fuzzing of the two hand-written readers on the unauthenticated and the authenticated path — the
/// body reader (`SignedPayloadBody`) and the tape decoder behind `PayloadDecoder` — against `JSONDecoder`, on
/// 100,000 seeded random inputs each: whenever the fast reader answers, `JSONDecoder` gives the same answer, and
/// no input traps (a crash here fails the whole test run). Seeds are fixed, so a failure reproduces. Each takes seconds
/// in a debug build: both yield every 500 inputs, so that side by side they do not hold both threads of the test
/// process's cooperative pool (the pool watchdog saw 7 s stalls at the end of every ordinary pass before they did).
@Suite("The hand-written JSON readers agree with JSONDecoder on random and damaged input", .poolWatchdog)
struct DecoderDifferentialTests {
    static let cases = 100_000

    @Test("SignedPayloadBody's direct read: 100,000 random bodies")
    func bodyReader() async {
        var random = RandomJSON(seed: 0x5EED_0001, keys: ["signedPayload"])
        var answered = 0
        for index in 0..<Self.cases {
            if index % 500 == 0 { await Task.yield() }
            let value = random.chance(70) ? "\"eyJhbGciOiJFUzI1NiJ9.e30.\(String(repeating: "A", count: index % 50))\"" : random.string()
            var text = random.whitespace() + "{" + random.whitespace() + "\"signedPayload\"" + random.whitespace() + ":" + random.whitespace()
            text += value + random.whitespace() + (random.chance(10) ? ",\"x\":1" : "") + "}" + random.whitespace()
            let bytes = random.chance(30) ? random.damage(text) : Array(text.utf8)
            let fast = bytes.withUnsafeBytes { SignedPayloadBody.directForm($0) }
            let foundation = try? JSONDecoder().decode(SignedPayloadBody.self, from: Data(bytes))
            if let fast {
                answered += 1
                #expect(fast == foundation, "case \(index): \(String(decoding: bytes, as: UTF8.self))")
            }
            #expect(SignedPayloadBody.decode(bytes) == foundation, "case \(index)")
        }
        #expect(answered > Self.cases / 3, "the direct read should answer most well-formed bodies")
    }

    @Test("the tape decoder: 100,000 random payloads of transactions, renewal infos and notifications")
    func tapeDecoder() async {
        let keys = [
            "originalTransactionId", "transactionId", "bundleId", "productId", "purchaseDate", "expiresDate", "signedDate", "quantity", "type",
            "appAccountToken", "offerType", "offerIdentifier", "environment", "price", "currency", "isUpgraded", "revocationReason",
            "autoRenewStatus", "expirationIntent", "eligibleWinBackOfferIds", "isInBillingRetryPeriod", "notificationType", "subtype",
            "notificationUUID", "version", "data", "summary", "appAppleId", "status", "signedTransactionInfo",
        ]
        var random = RandomJSON(seed: 0x5EED_0002, keys: keys)
        var answered = 0
        for index in 0..<Self.cases {
            if index % 500 == 0 { await Task.yield() }
            let text = random.object()
            let bytes = Data(random.chance(25) ? random.damage(text) : Array(text.utf8))
            let agreed: Bool
            switch index % 3 {
            case 0: agreed = agree(TransactionInfo.self, bytes, &answered)
            case 1: agreed = agree(RenewalInfo.self, bytes, &answered)
            default: agreed = agree(NotificationPayload.self, bytes, &answered)
            }
            #expect(agreed, "case \(index): \(String(decoding: bytes, as: UTF8.self))")
        }
        #expect(answered > Self.cases / 20, "the tape decoder should answer a fair share of valid payloads")
    }

    /// Whether the tape decoder, when it answers, answers what JSONDecoder does.
    private func agree<T: Decodable & Equatable>(_ type: T.Type, _ bytes: Data, _ answered: inout Int) -> Bool {
        guard let fast = PayloadDecoder.fastDecode(type, from: bytes) else { return true }
        answered += 1
        return fast == (try? JSONDecoder().decode(type, from: bytes))
    }
}
