import Foundation
import Logging
import PostgresNIO
import Prometheus
import ReclaimDomain
import ReclaimStore

/// Everything the routes and services need, built once in `ReclaimServer` (or a test) and passed in.
public struct Dependencies: Sendable {
    public var config: ReclaimConfig
    public var postgres: Database
    public var metricsRegistry: PrometheusCollectorRegistry
    public var logger: Logger
    /// Verifies Apple's signed payloads; shared so its cache of verified chains is too.
    public var verifier: AppleJWSVerifier
    /// Offer signers by bundle id, made from the config's signing keys (read and checked at start-up).
    public var signers: [String: OfferSigner]
    /// Signs every offer: campaigns', grants', deliveries', the refresher's and Retention Messaging's.
    public var issuer: OfferIssuer
    /// Every configured campaign, each as its kind's type (mirrored to `reclaim.campaigns`).
    public var campaigns: [any CampaignKind]
    /// The campaign rules the workers run: the campaigns Apple's notifications fire.
    public var campaignEngine: CampaignEngine
    /// User-token verifiers of the apps that require user tokens, by bundle id.
    public var userTokens: [String: UserTokenVerifier]
    /// Progress of the worker lanes and ingest transactions, for `/healthz`.
    public var liveness: Liveness
    /// The apps' forwarding targets and webhooks, their secrets read and checked.
    public var outboundTargets: [OutboundTarget]
    /// Who has a live offer, for `GET /v1/offers`; kept in sync by ``LiveOfferListener`` in the API role (until it
    /// is, every launch asks the database).
    let liveOffers = LiveOfferIndex()
    /// Opens when the config is mirrored into the database; `ReclaimServer` closes it until ``ConfigSync`` has run.
    public var startupGate = StartupGate(open: true)
    /// The App Store Server API's rate budget, shared by every call this process makes and, through the database, with
    /// every other Reclaim process.
    public var applePacer: AppleAPIPacer
    /// The apps stopped by `reclaim stop`, as this process knows them (at most a second old).
    let appStops: AppStops
    /// How long `POST /v1/cancel-flow` may take to decide and commit before it answers `none`: 2 s, the subscriber is
    /// waiting to cancel. Tests of something else (the client) lengthen it, so that a busy machine's late answer is
    /// not read as theirs; the cancel flow's own tests keep it.
    public var cancelFlowDeadline: Duration = .seconds(2)

    /// - Parameter verifier: defaults to one trusting Apple's root and the config's extra roots.
    public init(
        config: ReclaimConfig,
        postgres: Database,
        metricsRegistry: PrometheusCollectorRegistry,
        logger: Logger,
        verifier: AppleJWSVerifier? = nil,
        now: @escaping @Sendable () -> Date = Date.init
    ) throws {
        self.config = config
        self.postgres = postgres
        self.metricsRegistry = metricsRegistry
        self.logger = logger
        self.verifier = try verifier ?? AppleJWSVerifier(trust: config.rootTrust())
        self.signers = try config.offerSigners()
        self.userTokens = try config.userTokenVerifiers()
        self.outboundTargets = try config.outboundTargets()
        self.issuer = OfferIssuer(
            signers: signers,
            policy: SignaturePolicy(resignAfter: TimeInterval(config.offers.resignAfter.seconds)),
            now: now
        )
        self.campaigns = try config.domainCampaigns()
        self.campaignEngine = CampaignEngine(campaigns: campaigns.of(NotificationCampaign.self), issuer: issuer, now: now)
        campaignEngine.accountTokens = Dictionary(config.apps.map { ($0.bundleId, $0.setAppAccountToken) }, uniquingKeysWith: { first, _ in first })
        self.applePacer = AppleAPIPacer(database: postgres, logger: logger)
        self.appStops = AppStops(postgres: postgres, apps: config.apps.map(\.bundleId))
        // Longer than any one database operation may take (waiting for the connection, then the longer of the
        // two deadlines), with a margin: a loop past it is wedged, not slow.
        let deadlines = config.database.deadlines
        self.liveness = Liveness(bound: deadlines.acquire + max(deadlines.query, deadlines.transaction) + .seconds(30))
    }
}
