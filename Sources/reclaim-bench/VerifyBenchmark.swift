import Crypto
import Foundation
import ReclaimDomain

/// `reclaim-bench verify [DIR] [--seconds S]`: how many real App Store notifications one task verifies per second,
/// each with its nested transaction and renewal JWS, once the chain cache is warm (the service's steady state).
enum VerifyBenchmark {
    /// Loads every `{"signedPayload": …}` body in `directory`, warms the cache, then verifies them round-robin
    /// on the calling task for `seconds`.
    static func run(directory: URL, seconds: Double = 3) async throws -> (notificationsPerSecond: Double, jwsPerSecond: Double) {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".json") }
            .sorted()
        let payloads = try files.map { file in
            try JSONDecoder().decode(SignedPayloadBody.self, from: Data(contentsOf: directory.appendingPathComponent(file)))
                .signedPayload
        }
        guard !payloads.isEmpty else { throw BenchError("no notifications in \(directory.path)") }

        let verifier = AppleJWSVerifier()
        // Warm-up: validates the chain once and fills the cache, and tells how many JWS each notification holds.
        var jwsCounts: [Int] = []
        for payload in payloads {
            let verified = try await verifier.verifyNotification(payload)
            jwsCounts.append(1 + (verified.transaction == nil ? 0 : 1) + (verified.renewalInfo == nil ? 0 : 1))
        }

        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start.advanced(by: .nanoseconds(Int64(seconds * 1_000_000_000)))
        var notifications = 0
        var jws = 0
        var index = 0
        while clock.now < deadline {
            _ = try await verifier.verifyNotification(payloads[index])
            notifications += 1
            jws += jwsCounts[index]
            index = (index + 1) % payloads.count
        }
        let elapsed = start.duration(to: clock.now)
        let secondsElapsed = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return (Double(notifications) / secondsElapsed, Double(jws) / secondsElapsed)
    }

    /// What ingest does per request, minus HTTP and the database: read the body, verify the outer JWS
    /// (one ECDSA verification), decode the nested payloads. Bodies per second.
    static func ingestVerifyRate(directory: URL, seconds: Double) async throws -> Double {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".json") }.sorted()
        let bodies = try files.map { try Data(contentsOf: directory.appendingPathComponent($0)) }
        let verifier = AppleJWSVerifier()
        for body in bodies { _ = try await verifier.verifyNotificationEnvelope(try unwrap(body)) }
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start.advanced(by: .nanoseconds(Int64(seconds * 1_000_000_000)))
        var count = 0
        while clock.now < deadline {
            _ = try await verifier.verifyNotificationEnvelope(try unwrap(bodies[count % bodies.count]))
            count += 1
        }
        let elapsed = start.duration(to: clock.now)
        return Double(count) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    private static func unwrap(_ body: Data) throws -> String {
        guard let envelope = SignedPayloadBody.decode(body) else { throw BenchError("not a {\"signedPayload\": …} body") }
        return envelope.signedPayload
    }

    /// `reclaim-bench verify DIR [--seconds S]`: prints `{"jws_per_s":M,"notifications_per_s":N}` as its last line.
    static func run(_ options: BenchOptions) async throws {
        let directory = (try? options.positional(0)) ?? "Tests/Fixtures/apple-sandbox-notifications"
        let seconds = options.double("seconds", default: 3)
        let result = try await run(directory: URL(fileURLWithPath: directory), seconds: seconds)
        let ingest = try await ingestVerifyRate(directory: URL(fileURLWithPath: directory), seconds: seconds)
        let raw = try rawVerifyRate(seconds: seconds)
        let rawDistinct = try rawVerifyRate(seconds: seconds, distinct: 350)
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
    static func rawVerifyRate(seconds: Double, distinct: Int = 1) throws -> Double {
        let key = P256.Signing.PrivateKey()
        let messages = (0..<distinct).map { Data(repeating: UInt8(truncatingIfNeeded: $0), count: 64) }
        let signatures = try messages.map { try key.signature(for: $0) }
        let publicKey = key.publicKey
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start.advanced(by: .nanoseconds(Int64(seconds * 1_000_000_000)))
        var count = 0
        while clock.now < deadline {
            let index = count % distinct
            guard publicKey.isValidSignature(signatures[index], for: messages[index]) else { throw BenchError("signature did not verify") }
            count += 1
        }
        let elapsed = start.duration(to: clock.now)
        return Double(count) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }
}
