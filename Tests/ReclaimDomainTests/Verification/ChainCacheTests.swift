import Foundation
import ReclaimDomain
import ReclaimTestSupport
import Testing

@Suite(.poolWatchdog) struct ChainCacheTests {
    private func payload(signedDate: Date) -> [String: Any] {
        [
            "notificationType": "TEST", "notificationUUID": UUID().uuidString.lowercased(),
            "signedDate": Int64(signedDate.timeIntervalSince1970 * 1000),
            "data": ["bundleId": "com.example.app", "environment": "Sandbox"],
        ]
    }

    @Test func sameChainIsValidatedOnce() async throws {
        let ca = try TestCertificateAuthority()
        let verifier = AppleJWSVerifier(trustedRoots: [ca.root])
        #expect(verifier.cachedChainCount == 0)
        _ = try await verifier.verify(try ca.sign(json: payload(signedDate: Date())))
        _ = try await verifier.verify(try ca.sign(json: payload(signedDate: Date())))
        #expect(verifier.chainValidationCount == 1)
        #expect(verifier.cachedChainCount == 1)
    }

    @Test func cachedChainIsNotReusedOutsideItsValidity() async throws {
        let now = Date()
        let ca = try TestCertificateAuthority(leafValidity: now.addingTimeInterval(-86_400)...now.addingTimeInterval(86_400))
        let verifier = AppleJWSVerifier(trustedRoots: [ca.root])
        _ = try await verifier.verify(try ca.sign(json: payload(signedDate: now)))
        #expect(verifier.chainValidationCount == 1)

        // Same chain bytes, signed two days later: the cached chain's validity window is checked against every
        // payload's signedDate, so the cache does not vouch for it (and needs no second validation to say so).
        let late = try ca.sign(json: payload(signedDate: now.addingTimeInterval(86_400 * 2)))
        let error = await #expect(throws: JWSVerificationError.self) { _ = try await verifier.verify(late) }
        #expect(error?.code == .chainExpired)
        #expect(verifier.chainValidationCount == 1)

        // Inside the window again: served from the cache.
        _ = try await verifier.verify(try ca.sign(json: payload(signedDate: now.addingTimeInterval(3_600))))
        #expect(verifier.chainValidationCount == 1)
    }

    @Test func refusedChainsAreNotCached() async throws {
        let ca = try TestCertificateAuthority()
        let verifier = AppleJWSVerifier()  // does not trust ca
        for _ in 0..<2 {
            await #expect(throws: JWSVerificationError.self) { _ = try await verifier.verify(try ca.sign(json: payload(signedDate: Date()))) }
        }
        #expect(verifier.cachedChainCount == 0)
        #expect(verifier.chainValidationCount == 2)
    }

    @Test func leastRecentlyUsedChainIsEvicted() async throws {
        let first = try TestCertificateAuthority()
        let second = try TestCertificateAuthority()
        let third = try TestCertificateAuthority()
        let verifier = AppleJWSVerifier(trustedRoots: [first.root, second.root, third.root], chainCacheCapacity: 2)
        for ca in [first, second, first, third] {
            _ = try await verifier.verify(try ca.sign(json: payload(signedDate: Date())))
        }
        #expect(verifier.cachedChainCount == 2)
        #expect(verifier.chainValidationCount == 3)
        // `second` was the least recently used, so it was evicted; `first` and `third` are still cached.
        _ = try await verifier.verify(try first.sign(json: payload(signedDate: Date())))
        _ = try await verifier.verify(try third.sign(json: payload(signedDate: Date())))
        #expect(verifier.chainValidationCount == 3)
        _ = try await verifier.verify(try second.sign(json: payload(signedDate: Date())))
        #expect(verifier.chainValidationCount == 4)
    }

    @Test func zeroCapacityDisablesTheCache() async throws {
        let ca = try TestCertificateAuthority()
        let verifier = AppleJWSVerifier(trustedRoots: [ca.root], chainCacheCapacity: 0)
        _ = try await verifier.verify(try ca.sign(json: payload(signedDate: Date())))
        _ = try await verifier.verify(try ca.sign(json: payload(signedDate: Date())))
        #expect(verifier.cachedChainCount == 0)
        #expect(verifier.chainValidationCount == 2)
    }
}

extension ChainCacheTests {
    @Test func forgeriesWithAValidChainAreNotCached() async throws {
        // Apple's real header with a signature that does not verify: the chain validates, but nothing is remembered.
        let parts = try AppleSandboxFixtures.first("TEST").signedPayload.split(separator: ".").map(String.init)
        let verifier = AppleJWSVerifier()
        let forged = [parts[0], parts[1], Base64URL.encode(Data(repeating: 7, count: 64))].joined(separator: ".")
        await #expect(throws: JWSVerificationError.self) { _ = try await verifier.verify(forged) }
        #expect(verifier.cachedChainCount == 0)
        #expect(verifier.chainValidationCount == 1)
    }
}
