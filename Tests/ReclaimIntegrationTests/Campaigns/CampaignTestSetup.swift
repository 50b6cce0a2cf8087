import Foundation
import PostgresNIO
import ReclaimDomain
import ReclaimService
import ReclaimStore
import ReclaimTestSupport
import SwiftASN1
import X509

/// A config for the sandbox corpus's app with a freshly generated signing key and two campaigns: retention on
/// AUTO_RENEW_DISABLED (priority 10) and win-back on EXPIRED/VOLUNTARY (priority 5). Cooldowns are zero and
/// the delivery window long, so that every trigger in the corpus (July 2025) is decided on its merits.
struct CampaignTestSetup {
    let directory: URL
    let key: SigningKey
    let config: ReclaimConfig
    /// The same config as a file, for `reclaim` processes (RECLAIM_CONFIG).
    let configFile: URL

    static let issuerId = "11111111-2222-3333-4444-555555555555"

    /// The win-back campaign as an experiment: two variants of equal weight instead of its one offer.
    static let winbackExperiment = """
        variants:
              - {id: thirty, offer: {productId: ca.geniusparentingai.basic.monthly, offerIdentifier: WINBACK30}, weight: 1}
              - {id: fifty, offer: {productId: ca.geniusparentingai.basic.monthly, offerIdentifier: WINBACK50}, weight: 1}
        """

    /// - Parameter ca: a test CA the corpus's app also trusts (for realtime requests the test signs itself).
    /// - Parameter userTokenSecret: when given, the app requires user tokens signed with it.
    /// - Parameter settings: top-level YAML appended to the config (`worker:`, `database:` …).
    /// - Parameter appSettings: keys added to the corpus app's entry (`forwarding:`, `webhooks:`), indented four spaces.
    init(
        holdoutPercent: Int = 0,
        extraApps: String = "",
        ca: TestCertificateAuthority? = nil,
        userTokenSecret: String? = nil,
        previousUserTokenSecret: String? = nil,
        settings: String = "",
        appSettings: String = "",
        winbackOffer: String = "offer: {productId: ca.geniusparentingai.basic.monthly, offerIdentifier: WINBACK30}"
    ) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("reclaim-campaigns-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        key = SigningKey.generate(keyId: "TESTKEY001")
        let keyFile = directory.appendingPathComponent("key.p8")
        try Data(key.pkcs8PEM.utf8).write(to: keyFile)
        var userTokens = ""
        if let userTokenSecret {
            let secretFile = directory.appendingPathComponent("user-token-secret")
            try userTokenSecret.write(to: secretFile, atomically: true, encoding: .utf8)
            userTokens = "userTokenSecretFile: \(secretFile.path)"
            if let previousUserTokenSecret {
                let previousFile = directory.appendingPathComponent("previous-user-token-secret")
                try previousUserTokenSecret.write(to: previousFile, atomically: true, encoding: .utf8)
                userTokens += "\n    previousUserTokenSecretFile: \(previousFile.path)"
            }
        }
        var roots = "[]"
        if let ca {
            let rootFile = directory.appendingPathComponent("root.pem")
            try ca.root.serializeAsPEM().pemString.write(to: rootFile, atomically: true, encoding: .utf8)
            roots = "[\(rootFile.path)]"
        }
        let yaml = """
            apps:
              - bundleId: GeniusParentingAI
                appAppleId: 6747332178
                environments: [Sandbox]
                issuerId: \(Self.issuerId)
                signingKeys: [{keyId: TESTKEY001, file: \(keyFile.path)}]
                rootCertificates: \(roots)
                defaultMessageIdentifier: default-message
                \(userTokens)
            \(appSettings)
            \(extraApps)
            campaigns:
              - id: retain-auto-renew-off
                app: GeniusParentingAI
                trigger: DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED
                offer: {productId: ca.geniusparentingai.basic.monthly, offerIdentifier: RETAIN50}
                deliverableFor: 2000d
                cooldown: 0s
                holdoutPercent: \(holdoutPercent)
                priority: 10
              - id: winback-expired
                app: GeniusParentingAI
                trigger: EXPIRED/VOLUNTARY
                \(winbackOffer)
                messageIdentifier: winback-message
                deliverableFor: 2000d
                cooldown: 0s
                holdoutPercent: \(holdoutPercent)
                priority: 5
            \(settings)
            """
        config = try ReclaimConfig.parse(yaml: yaml)
        configFile = directory.appendingPathComponent("config.yaml")
        try yaml.write(to: configFile, atomically: true, encoding: .utf8)
    }

    var signer: OfferSigner { OfferSigner(key: key, bundleId: "GeniusParentingAI", issuerId: Self.issuerId) }

    func remove() { try? FileManager.default.removeItem(at: directory) }
}

/// One row of reclaim.offers, for assertions.
struct OfferRow: Sendable {
    let id: UUID
    let campaignId: String
    let state: String
    let productId: String
    let offerIdentifier: String
    let keyId: String
    let nonce: UUID
    let signedAt: Date
    let applicationUsername: String
    let storeKit1Signature: String
    let storeKit2JWS: String
    let endReason: String?

    static func all(_ client: Database) async throws -> [OfferRow] {
        let rows = try await client.query(
            """
            SELECT id, campaign_id, state, product_id, offer_identifier, key_id, nonce, signed_at, application_username,
                   storekit1_signature, storekit2_jws, end_reason
            FROM reclaim.offers ORDER BY triggered_at
            """,
            logger: TestPostgres.logger
        )
        var offers: [OfferRow] = []
        for try await r in rows.decode((UUID, String, String, String, String, String, UUID, Date, String, String, String, String?).self) {
            offers.append(
                OfferRow(
                    id: r.0,
                    campaignId: r.1,
                    state: r.2,
                    productId: r.3,
                    offerIdentifier: r.4,
                    keyId: r.5,
                    nonce: r.6,
                    signedAt: r.7,
                    applicationUsername: r.8,
                    storeKit1Signature: r.9,
                    storeKit2JWS: r.10,
                    endReason: r.11
                )
            )
        }
        return offers
    }
}

/// Decision outcomes per campaign, e.g. ["winback-expired/offered": 7].
func decisionCounts(_ client: Database) async throws -> [String: Int] {
    let rows = try await client.query(
        "SELECT campaign_id || '/' || outcome, count(*)::bigint FROM reclaim.campaign_decisions GROUP BY 1",
        logger: TestPostgres.logger
    )
    var counts: [String: Int] = [:]
    for try await (key, count) in rows.decode((String, Int64).self) { counts[key] = Int(count) }
    return counts
}

/// A fresh database holding the real sandbox corpus processed in signedDate order with `setup`'s campaigns
/// (subscriber 2000000970472825, appAccountToken …0051, ends with a live win-back offer); runs `body` with it.
func withProcessedCorpus(
    _ setup: CampaignTestSetup,
    _ body: @Sendable (Database, Dependencies) async throws -> Void
) async throws {
    let corpus = try CorpusCampaignTests.corpusInSignedDateOrder()
    try await withTestDatabase { client, _ in
        let dependencies = try Dependencies.test(postgres: client, config: setup.config)
        try await processNotifications(corpus.map(\.notification.body), client: client, dependencies: dependencies)
        try await body(client, dependencies)
    }
}
