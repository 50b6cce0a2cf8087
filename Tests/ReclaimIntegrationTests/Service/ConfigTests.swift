import Foundation
import ReclaimService
import Testing

@Suite("Configuration file")
struct ConfigTests {
    static let example = """
        apps:
          - bundleId: com.example.app
            appAppleId: 1234567890
            environments: [Production, Sandbox]
            issuerId: 00000000-0000-0000-0000-000000000000
            signingKeys:
              - keyId: ABCDEFGHIJ
                file: /etc/reclaim/SubscriptionKey_ABCDEFGHIJ.p8
            rootCertificates: []
        campaigns:
          - id: retain-auto-renew-off
            app: com.example.app
            trigger: DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED
            offer: { productId: com.example.monthly, offerIdentifier: RETAIN50 }
            deliverableFor: 7d
            cooldown: 90d
            holdoutPercent: 10
            priority: 10
        """

    @Test("the example from DESIGN.md loads with its meanings")
    func designExample() throws {
        let config = try ReclaimConfig.parse(yaml: Self.example)
        #expect(config.apps.count == 1)
        #expect(config.apps[0].appAppleId == 1_234_567_890)
        #expect(config.apps[0].environments == ["Production", "Sandbox"])
        #expect(config.apps[0].signingKeys[0].keyId == "ABCDEFGHIJ")
        let campaign = try #require(config.campaigns.first)
        #expect(campaign.deliverableFor.seconds == 7 * 86_400)
        #expect(campaign.cooldown.seconds == 90 * 86_400)
        #expect(campaign.holdoutPercent == 10)
        #expect(campaign.offer.offerIdentifier == "RETAIN50")
        #expect(config.worker.concurrency == 8)
    }

    @Test(
        "mistakes are refused with a message naming them",
        arguments: [
            (
                "environments: [Production, Sandbox]\n    issuerId", "environments: [Production]\n    appAppleId: null\n    issuerId",
                "appAppleId is required"
            ),
            ("app: com.example.app", "app: com.other.app", "not configured under apps"),
            ("deliverableFor: 7d", "deliverableFor: 7 days", "is not a duration"),
            ("holdoutPercent: 10", "holdoutPercent: 120", "holdoutPercent must be 0…100"),
            ("trigger: DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED", "trigger: A/B/C", "trigger must be TYPE or TYPE/SUBTYPE"),
            ("environments: [Production, Sandbox]", "environments: [Production, Staging]", "unknown environment Staging"),
        ]
    )
    func refused(original: String, replacement: String, message: String) {
        let yaml = Self.example.replacingOccurrences(of: original, with: replacement)
        #expect(yaml != Self.example)
        do {
            _ = try ReclaimConfig.parse(yaml: yaml, source: "test.yaml")
            Issue.record("accepted: \(replacement)")
        } catch {
            #expect("\(error)".contains(message), "\(error)")
            #expect("\(error)".contains("test.yaml"))
        }
    }
}
