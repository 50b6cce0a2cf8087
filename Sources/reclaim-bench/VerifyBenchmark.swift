import Crypto
import Foundation
import ReclaimDomain

/// `reclaim-bench verify [DIR] [--seconds S]`: how many real App Store notifications one task verifies per second,
/// each with its nested transaction and renewal JWS, once the chain cache is warm (the service's steady state).
enum VerifyBenchmark {
    /// Verifies `bodies` (`{"signedPayload": …}` each) round-robin on the calling task for `seconds`, after a
    /// warm-up pass that validates the chain once and fills the cache.
    static func notificationRate(bodies: [Data], seconds: Double) async throws -> (notificationsPerSecond: Double, jwsPerSecond: Double) {
        let payloads = try bodies.map(unwrap)
        let verifier = AppleJWSVerifier()
        // The warm-up also tells how many JWS each notification holds.
        var jwsCounts: [Int] = []
        for payload in payloads {
            let verified = try await verifier.verifyNotification(payload)
            jwsCounts.append(1 + (verified.transaction == nil ? 0 : 1) + (verified.renewalInfo == nil ? 0 : 1))
        }
        var jws = 0
        let run = try await timedLoop(seconds: seconds) { iteration in
            let index = iteration % payloads.count
            _ = try await verifier.verifyNotification(payloads[index])
            jws += jwsCounts[index]
        }
        return (Double(run.iterations) / run.seconds, Double(jws) / run.seconds)
    }

    /// What ingest does per request, minus HTTP and the database: read the body, verify the outer JWS
    /// (one ECDSA verification), decode the nested payloads. Bodies per second.
    static func ingestVerifyRate(bodies: [Data], seconds: Double) async throws -> Double {
        let verifier = AppleJWSVerifier()
        for body in bodies { _ = try await verifier.verifyNotificationEnvelope(try unwrap(body)) }
        let run = try await timedLoop(seconds: seconds) { iteration in
            _ = try await verifier.verifyNotificationEnvelope(try unwrap(bodies[iteration % bodies.count]))
        }
        return Double(run.iterations) / run.seconds
    }

    private static func unwrap(_ body: Data) throws -> String {
        guard let envelope = SignedPayloadBody.decode(body) else { throw BenchError("not a {\"signedPayload\": …} body") }
        return envelope.signedPayload
    }

    /// `reclaim-bench verify DIR [--seconds S]`: prints `{"jws_per_s":M,"notifications_per_s":N,…}` as its last line.
    static func run(_ options: BenchOptions) async throws {
        let directory = URL(fileURLWithPath: (try? options.positional(0)) ?? "Tests/Fixtures/apple-sandbox-notifications")
        let seconds = options.double("seconds", default: 3)
        let bodies = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".json") }
            .sorted()
            .map { try Data(contentsOf: directory.appendingPathComponent($0)) }
        guard !bodies.isEmpty else { throw BenchError("no notifications in \(directory.path)") }

        let result = try await notificationRate(bodies: bodies, seconds: seconds)
        let ingest = try await ingestVerifyRate(bodies: bodies, seconds: seconds)
        let raw = try await rawVerifyRate(seconds: seconds)
        let rawDistinct = try await rawVerifyRate(seconds: seconds, distinct: 350)
        printFigures([
            "swift_crypto_verify_350_distinct_per_s": Int(rawDistinct.rounded()),
            "notifications_per_s": Int(result.notificationsPerSecond.rounded()),
            "jws_per_s": Int(result.jwsPerSecond.rounded()),
            "ingest_bodies_per_s": Int(ingest.rounded()),
            "swift_crypto_verify_per_s": Int(raw.rounded()),
        ])
    }

    /// swift-crypto's bare P-256 verify rate (SHA-256 of 64 bytes + ECDSA), the ceiling for `jws_per_s`, over
    /// `distinct` different signatures in turn. With 1 it is `openssl speed`'s loop (the same signature again and
    /// again, which the branch predictor learns); the notification corpus has about 350 different ones.
    static func rawVerifyRate(seconds: Double, distinct: Int = 1) async throws -> Double {
        let key = P256.Signing.PrivateKey()
        let messages = (0..<distinct).map { Data(repeating: UInt8(truncatingIfNeeded: $0), count: 64) }
        let signatures = try messages.map { try key.signature(for: $0) }
        let publicKey = key.publicKey
        let run = try await timedLoop(seconds: seconds) { iteration in
            let index = iteration % distinct
            guard publicKey.isValidSignature(signatures[index], for: messages[index]) else { throw BenchError("signature did not verify") }
        }
        return Double(run.iterations) / run.seconds
    }
}
