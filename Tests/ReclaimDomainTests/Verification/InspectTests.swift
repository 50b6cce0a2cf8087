import Foundation
import ReclaimDomain
import ReclaimTestSupport
import Testing

@Suite(.poolWatchdog) struct InspectTests {
    private func object(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func bodyIsDecodedWithNestedPayloadsReplaced() async throws {
        let fixture = try AppleSandboxFixtures.first("DID_RENEW")
        let output = try await AppleJWSVerifier().inspect(fixture.body)
        let decoded = try object(output)
        #expect(decoded["notificationUUID"] as? String == fixture.uuid)
        let data = try #require(decoded["data"] as? [String: Any])
        let transaction = try #require(data["signedTransactionInfo"] as? [String: Any])
        let renewal = try #require(data["signedRenewalInfo"] as? [String: Any])
        #expect(transaction["bundleId"] as? String == AppleSandboxFixtures.bundleId)
        #expect(transaction["signedDate"] as? Int64 != nil || (transaction["signedDate"] as? NSNumber) != nil)
        #expect(renewal["originalTransactionId"] as? String == transaction["originalTransactionId"] as? String)
        let text = String(decoding: output, as: UTF8.self)
        // Pretty, sorted keys, integers as integers.
        #expect(text.contains("\n"))
        #expect(text.contains("\"appAppleId\" : 6747332178"))
        let keys = ["data", "notificationType", "notificationUUID", "signedDate", "version"].map { "\n  \"\($0)\" : " }
        let positions = try keys.map { try #require(text.range(of: $0)?.lowerBound) }
        #expect(positions == positions.sorted())
    }

    @Test func rawJWSWithWhitespaceIsAccepted() async throws {
        let fixture = try AppleSandboxFixtures.first("TEST")
        let output = try await AppleJWSVerifier().inspect(Data(("\n  " + fixture.signedPayload + "\n").utf8))
        #expect(try object(output)["notificationType"] as? String == "TEST")
    }

    @Test func nestedJWSAloneIsInspected() async throws {
        let fixture = try AppleSandboxFixtures.first("DID_RENEW")
        let verified = try await AppleJWSVerifier().verifyNotification(fixture.signedPayload)
        let jws = try #require(verified.payload.data?.signedRenewalInfo)
        let output = try await AppleJWSVerifier().inspect(Data(jws.utf8), expectedEnvironment: "Sandbox")
        #expect(try object(output)["autoRenewProductId"] as? String != nil)
        // Renewal info names no bundle id, so expecting one cannot be satisfied.
        let error = await #expect(throws: AppIdentityError.self) {
            _ = try await AppleJWSVerifier().inspect(Data(jws.utf8), expectedBundleId: AppleSandboxFixtures.bundleId)
        }
        #expect(error?.code == .unknownApp)
    }

    @Test func expectationsAreChecked() async throws {
        let fixture = try AppleSandboxFixtures.first("DID_RENEW")
        let verifier = AppleJWSVerifier()
        _ = try await verifier.inspect(fixture.body, expectedBundleId: AppleSandboxFixtures.bundleId, expectedEnvironment: "Sandbox")
        let bundle = await #expect(throws: AppIdentityError.self) {
            _ = try await verifier.inspect(fixture.body, expectedBundleId: "com.other.app")
        }
        #expect(bundle?.code == .unknownApp)
        let environment = await #expect(throws: AppIdentityError.self) {
            _ = try await verifier.inspect(fixture.body, expectedEnvironment: "Production")
        }
        #expect(environment?.code == .environmentNotAccepted)
    }

    @Test func badInputIsMalformed() async throws {
        for input in ["", "{\"signedPayload\": 5}", "{\"other\": \"x\"}", "a.b"] {
            let error = await #expect(throws: JWSVerificationError.self) {
                _ = try await AppleJWSVerifier().inspect(Data(input.utf8))
            }
            #expect(error?.code == .malformed, "\(input)")
        }
    }

    @Test func realtimeRequestIsInspected() async throws {
        let ca = try TestCertificateAuthority()
        let request = RealtimeRequest(
            originalTransactionId: "2000000970472825",
            appAppleId: 1_234_567_890,
            productId: "monthly",
            userLocale: "en-US",
            requestIdentifier: UUID().uuidString,
            signedDate: Int64(Date().timeIntervalSince1970 * 1000),
            environment: .sandbox
        )
        let jws = try ca.sign(request)
        let verifier = AppleJWSVerifier(trustedRoots: [ca.root])
        #expect(try await verifier.verifyRealtimeRequest(jws) == request)
        let output = try await verifier.inspect(Data("{\"signedPayload\":\"\(jws)\"}".utf8), expectedEnvironment: "Sandbox")
        #expect(try object(output)["requestIdentifier"] as? String == request.requestIdentifier)
    }
}
