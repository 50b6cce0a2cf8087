import Foundation
import ReclaimDomain
import ReclaimTestSupport
import Testing

@testable import ReclaimService

/// A new campaign kind cannot be half added (docs/decisions/0007-a-type-per-campaign-kind.md).
@Suite(.poolWatchdog) struct CampaignKindsTests {
    static let domain = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/ReclaimDomain")

    /// Every `struct X: CampaignKind` declared in ReclaimDomain.
    static func declaredKinds() throws -> Set<String> {
        var kinds = Set<String>()
        let files = FileManager.default.enumerator(atPath: domain.path)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
        for file in files {
            let source = try String(contentsOf: domain.appendingPathComponent(file), encoding: .utf8)
            for match in source.matches(of: /struct (\w+): CampaignKind\b/) { kinds.insert(String(match.output.1)) }
        }
        return kinds
    }

    @Test("every kind ReclaimDomain declares is one the config builds, once")
    func everyKindIsConfigured() throws {
        let configured = ReclaimConfig.Campaign.kinds.map { String(describing: $0.domainType) }
        #expect(try Self.declaredKinds() == Set(configured))
        #expect(Set(configured).count == configured.count, "a kind listed twice: \(configured)")
        #expect(try Self.declaredKinds().count >= 2)
    }

    @Test("a trigger names one kind: each kind's own trigger is claimed by that kind alone")
    func triggersClaimedOnce() throws {
        let kinds = ReclaimConfig.Campaign.kinds
        for kind in kinds {
            let name = try Self.example(of: kind).triggerName
            let claimants = kinds.filter { $0.claims(trigger: name) }.map { String(describing: $0.domainType) }
            #expect(claimants == [String(describing: kind.domainType)], "trigger \(name) is claimed by \(claimants)")
        }
    }

    /// A campaign of `kind` as the config builds it from the documented example's first entry of that kind.
    static func example(of kind: any CampaignKindKeys.Type) throws -> any CampaignKind {
        let config = try ReclaimConfig.parse(yaml: DocsContractTests.configurationExample, source: "docs/configuration.md")
        let entry = try #require(
            config.campaigns.first { ObjectIdentifier($0.kind) == ObjectIdentifier(kind) },
            "docs/configuration.md has no \(kind.domainType) campaign"
        )
        return try #require(
            try config.domainCampaigns().first { $0.id == entry.id && ObjectIdentifier(type(of: $0)) == ObjectIdentifier(kind.domainType) }
        )
    }
}
