import Foundation
import ReclaimDomain

/// `reclaim-bench sign`: StoreKit 1 offer signatures per second on one thread, to compare with
/// `openssl speed ecdsap256` (scripts/bench.d/sign.sh).
///
/// Each iteration builds and signs a full request (payload, SHA-256, ECDSA, DER, base64), as a worker does.
enum SignBenchmark {
    /// Signs for about `seconds` and returns the rate and the number of signatures made.
    static func run(seconds: Double) throws -> (perSecond: Double, count: Int) {
        let key = SigningKey.generate(keyId: "BENCHKEY01")
        let signer = OfferSigner(key: key, bundleId: "com.example.reclaim", issuerId: nil)
        let timestamp: Int64 = 1_700_000_000_000

        // Warm up (first-use allocation, lazy library initialisation) outside the timed loop.
        for i in 0..<100 {
            _ = try signer.storeKit1(
                product: "com.example.pro.monthly",
                offer: "winback50",
                applicationUsername: "",
                nonce: nonce(i),
                timestamp: timestamp
            )
        }

        let clock = ContinuousClock()
        let start = clock.now
        let limit = budget(seconds: seconds)
        var count = 0
        var elapsed = Duration.zero
        while elapsed < limit {
            // Nonces come from the counter rather than UUID(), so the loop measures signing, not the random source.
            _ = try signer.storeKit1(
                product: "com.example.pro.monthly",
                offer: "winback50",
                applicationUsername: "",
                nonce: nonce(count),
                timestamp: timestamp
            )
            count += 1
            elapsed = clock.now - start
        }
        return (Double(count) / elapsed.inSeconds, count)
    }

    /// A distinct, valid UUID per iteration.
    private static func nonce(_ i: Int) -> UUID {
        let v = UInt64(truncatingIfNeeded: i)
        return UUID(
            uuid: (
                0x6b, 0xa7, 0xb8, 0x10, 0x9d, 0xad, 0x41, 0xd1, 0x80,
                UInt8(truncatingIfNeeded: v >> 48), UInt8(truncatingIfNeeded: v >> 40), UInt8(truncatingIfNeeded: v >> 32),
                UInt8(truncatingIfNeeded: v >> 24), UInt8(truncatingIfNeeded: v >> 16), UInt8(truncatingIfNeeded: v >> 8),
                UInt8(truncatingIfNeeded: v)
            )
        )
    }
}
