import Foundation
import ReclaimDomain
import ReclaimTestSupport
import Testing

@Suite(.poolWatchdog) struct RealNotificationTests {
    @Test func fixturesAreFound() throws {
        #expect(try AppleSandboxFixtures.all().count == 116)
    }

    @Test func everyRealNotificationVerifiesWithTheBundledRoot() async throws {
        let verifier = AppleJWSVerifier()
        let app = AppIdentity(bundleId: AppleSandboxFixtures.bundleId, appAppleId: AppleSandboxFixtures.appAppleId, environments: ["Sandbox"])
        var nestedCount = 0
        for fixture in try AppleSandboxFixtures.all() {
            let verified = try await verifier.verifyNotification(fixture.signedPayload)
            let payload = verified.payload
            #expect(payload.notificationUUID == fixture.uuid, "\(fixture.name)")
            #expect(fixture.name.hasPrefix(payload.notificationType.rawValue + (payload.subtype.map { "_" + $0.rawValue } ?? "") + "_"))
            #expect(payload.version == "2.0")
            #expect(payload.signedDate != nil)
            #expect(payload.bundleId == AppleSandboxFixtures.bundleId)
            #expect(payload.environment == .sandbox)
            if payload.notificationType == .test {
                #expect(verified.transaction == nil && verified.renewalInfo == nil)
            } else {
                #expect(payload.appAppleId == AppleSandboxFixtures.appAppleId)
                let transaction = try #require(verified.transaction, "\(fixture.name)")
                let renewal = try #require(verified.renewalInfo, "\(fixture.name)")
                #expect(transaction.bundleId == AppleSandboxFixtures.bundleId)
                #expect(transaction.environment == .sandbox)
                #expect(transaction.originalTransactionId == renewal.originalTransactionId)
                #expect(transaction.type == "Auto-Renewable Subscription")
                #expect(verified.transactionJSON != nil && verified.renewalInfoJSON != nil)
                nestedCount += 2
            }
            #expect(try checkIdentity(of: verified, apps: [app]) == app)
        }
        #expect(nestedCount == 220)
        // All of them share one Apple chain: it was validated once, then served from the cache.
        #expect(verifier.chainValidationCount == 1)
        #expect(verifier.cachedChainCount == 1)
    }

    @Test func realNotificationsVerifyConcurrently() async throws {
        let verifier = AppleJWSVerifier()
        let fixtures = try AppleSandboxFixtures.all()
        let verified = try await withThrowingTaskGroup(of: Int.self) { group in
            for fixture in fixtures {
                group.addTask {
                    _ = try await verifier.verifyNotification(fixture.signedPayload)
                    return 1
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(verified == 116)
        #expect(verifier.cachedChainCount == 1)
    }

    @Test func realChainIsRefusedAtTodaysDateBecauseTheLeafExpired() async throws {
        let fixture = try AppleSandboxFixtures.first("DID_RENEW")
        let verifier = AppleJWSVerifier()
        let future = Date(timeIntervalSince1970: 1_900_000_000)  // 2030, after the leaf's October 2025 expiry
        let error = await #expect(throws: JWSVerificationError.self) {
            _ = try await verifier.verify(fixture.signedPayload, validationTime: { _ in future })
        }
        #expect(error?.code == .chainExpired)
    }

    @Test func verifiedHeaderCarriesTheAppleChain() async throws {
        let fixture = try AppleSandboxFixtures.first("TEST")
        let verified = try await AppleJWSVerifier().verify(fixture.signedPayload)
        #expect(verified.header.alg == "ES256")
        #expect(verified.header.x5c.count == 3)
        let signedDate = try #require(AppleJWSVerifier.signedDate(in: verified.payload))
        #expect(verified.validationTime == signedDate)
    }
}
