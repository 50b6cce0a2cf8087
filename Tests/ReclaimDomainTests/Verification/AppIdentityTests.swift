import Foundation
import ReclaimDomain
import ReclaimTestSupport
import Testing

@Suite(.poolWatchdog) struct AppIdentityTests {
    let app = AppIdentity(bundleId: "com.example.app", appAppleId: 1_234_567_890, environments: ["Production", "Sandbox"])

    private func notification(
        bundleId: String = "com.example.app",
        environment: AppStoreEnvironment? = .production,
        appAppleId: Int64? = 1_234_567_890
    ) -> NotificationPayload {
        NotificationPayload(
            notificationType: .didRenew,
            notificationUUID: UUID().uuidString,
            signedDate: 1_753_852_003_116,
            data: NotificationData(environment: environment, appAppleId: appAppleId, bundleId: bundleId)
        )
    }

    /// The code `body` fails with, or `nil` when it succeeds.
    private func code(_ body: () throws -> Void) -> AppIdentityError.Code? {
        do {
            try body()
            return nil
        } catch let error as AppIdentityError {
            return error.code
        } catch {
            Issue.record("unexpected \(error)")
            return nil
        }
    }

    @Test func matchingProductionNotificationIsAccepted() throws {
        #expect(try checkIdentity(of: notification(), apps: [app]) == app)
    }

    @Test func wrongBundleIdIsUnknownApp() {
        #expect(code { try checkIdentity(of: notification(bundleId: "com.other.app"), apps: [app]) } == .unknownApp)
        #expect(code { try checkIdentity(of: notification(), apps: []) } == .unknownApp)
    }

    @Test func wrongEnvironmentIsRefused() {
        let sandboxOnly = AppIdentity(bundleId: "com.example.app", appAppleId: nil, environments: ["Sandbox"])
        #expect(code { try checkIdentity(of: notification(), apps: [sandboxOnly]) } == .environmentNotAccepted)
        #expect(code { try checkIdentity(of: notification(environment: "Xcode"), apps: [app]) } == .environmentNotAccepted)
        #expect(code { try checkIdentity(of: notification(environment: nil), apps: [app]) } == .environmentNotAccepted)
    }

    @Test func productionNeedsTheConfiguredAppAppleId() {
        #expect(code { try checkIdentity(of: notification(appAppleId: 42), apps: [app]) } == .wrongAppAppleId)
        #expect(code { try checkIdentity(of: notification(appAppleId: nil), apps: [app]) } == .wrongAppAppleId)
        let unconfigured = AppIdentity(bundleId: "com.example.app", appAppleId: nil, environments: ["Production"])
        #expect(code { try checkIdentity(of: notification(), apps: [unconfigured]) } == .wrongAppAppleId)
    }

    @Test func sandboxWithoutAppAppleIdIsFine() {
        #expect(code { try checkIdentity(of: notification(environment: .sandbox, appAppleId: nil), apps: [app]) } == nil)
        let unconfigured = AppIdentity(bundleId: "com.example.app", appAppleId: nil, environments: ["Sandbox"])
        #expect(code { try checkIdentity(of: notification(environment: .sandbox), apps: [unconfigured]) } == nil)
        // But a sandbox id that contradicts the configured one is refused.
        #expect(code { try checkIdentity(of: notification(environment: .sandbox, appAppleId: 42), apps: [app]) } == .wrongAppAppleId)
    }

    @Test func nestedPayloadsMustAgreeWithTheNotification() {
        let outer = notification()
        let good = VerifiedNotification(
            payload: outer,
            transaction: TransactionInfo(originalTransactionId: "1", bundleId: "com.example.app", environment: .production),
            renewalInfo: RenewalInfo(originalTransactionId: "1", environment: .production),
            payloadJSON: Data()
        )
        #expect(code { try checkIdentity(of: good, apps: [app]) } == nil)

        var otherBundle = good
        otherBundle.transaction?.bundleId = "com.other.app"
        #expect(code { try checkIdentity(of: otherBundle, apps: [app]) } == .inconsistentPayload)

        var otherEnvironment = good
        otherEnvironment.transaction?.environment = .sandbox
        #expect(code { try checkConsistency(of: otherEnvironment) } == .inconsistentPayload)

        var otherRenewalEnvironment = good
        otherRenewalEnvironment.renewalInfo?.environment = .sandbox
        #expect(code { try checkConsistency(of: otherRenewalEnvironment) } == .inconsistentPayload)

        var otherSubscription = good
        otherSubscription.renewalInfo?.originalTransactionId = "2"
        #expect(code { try checkConsistency(of: otherSubscription) } == .inconsistentPayload)
    }

    @Test func realtimeRequestsMatchByAppAppleIdAndEnvironment() {
        let request = RealtimeRequest(
            originalTransactionId: "1",
            appAppleId: 1_234_567_890,
            productId: "monthly",
            userLocale: "en-US",
            requestIdentifier: UUID().uuidString,
            signedDate: 1_753_852_003_116,
            environment: .production
        )
        #expect(code { try checkIdentity(of: request, apps: [app]) } == nil)
        var unknown = request
        unknown.appAppleId = 42
        #expect(code { try checkIdentity(of: unknown, apps: [app]) } == .unknownApp)
        var xcode = request
        xcode.environment = .xcode
        #expect(code { try checkIdentity(of: xcode, apps: [app]) } == .environmentNotAccepted)
    }

    @Test func realNotificationIdentity() async throws {
        let verified = try await AppleJWSVerifier().verifyNotification(try AppleSandboxFixtures.first("DID_RENEW").signedPayload)
        let real = AppIdentity(bundleId: AppleSandboxFixtures.bundleId, appAppleId: AppleSandboxFixtures.appAppleId, environments: ["Sandbox"])
        #expect(try checkIdentity(of: verified, apps: [app, real]) == real)
        #expect(code { try checkIdentity(of: verified, apps: [app]) } == .unknownApp)
        let productionOnly = AppIdentity(
            bundleId: AppleSandboxFixtures.bundleId,
            appAppleId: AppleSandboxFixtures.appAppleId,
            environments: ["Production"]
        )
        #expect(code { try checkIdentity(of: verified, apps: [productionOnly]) } == .environmentNotAccepted)
    }
}
