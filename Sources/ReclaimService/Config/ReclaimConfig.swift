import Foundation
import ReclaimDomain
import ReclaimStore
import Yams

/// Reclaim's configuration: the YAML file named by `RECLAIM_CONFIG`.
///
/// Every key is documented in README.md ("Configuration"). An unknown key is refused with its path and the
/// nearest known key (``ConfigKeys``): a typo must not quietly turn a setting off. Missing optional sections take
/// defaults.
public struct ReclaimConfig: Decodable, Sendable {
    public var apps: [App]
    public var campaigns: [Campaign]
    public var server: Server
    public var worker: Worker
    public var offers: Offers
    public var reconciliation: Reconciliation
    public var database: DatabaseTimeouts

    /// One App Store app that Reclaim serves.
    public struct App: Decodable, Sendable {
        public var bundleId: String
        /// Apple's numeric app id; required when Production is accepted (Production payloads must carry it).
        public var appAppleId: Int64?
        /// Environments whose notifications are accepted: Production, Sandbox (Xcode, LocalTesting for development).
        public var environments: [String]
        /// App Store Connect issuer id, needed for StoreKit 2 offer JWS.
        public var issuerId: String?
        /// Subscription keys (.p8) by key id; the first one signs new offers, the others remain known for rotation.
        public var signingKeys: [SigningKeyFile]
        /// Extra trusted root certificates (PEM files) for signed payloads; Apple Root CA - G3 is always trusted.
        public var rootCertificates: [String]
        /// Retention Messaging: the approved message Apple shows when no offer applies; nil answers nothing.
        public var defaultMessageIdentifier: String?
        /// A file holding the secret (32 bytes or more) the app's backend signs user tokens with; when set,
        /// `GET /v1/offers` requires a valid `X-Reclaim-User-Token` for the appAccountToken asked about.
        public var userTokenSecretFile: String?
        /// During a rotation of that secret: the file of the old one, whose tokens stay valid until it is removed.
        public var previousUserTokenSecretFile: String?
        /// The App Store Server API (an In-App Purchase key): reconciliation, backfill and test notifications.
        public var serverAPI: ServerAPI?

        enum CodingKeys: String, ConfigKeys {
            case bundleId, appAppleId, environments, issuerId, signingKeys, rootCertificates, defaultMessageIdentifier, userTokenSecretFile
            case previousUserTokenSecretFile, serverAPI
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.configContainer(keyedBy: CodingKeys.self)
            bundleId = try container.decode(String.self, forKey: .bundleId)
            appAppleId = try container.decodeIfPresent(Int64.self, forKey: .appAppleId)
            environments = try container.decodeIfPresent([String].self, forKey: .environments) ?? ["Production", "Sandbox"]
            issuerId = try container.decodeIfPresent(String.self, forKey: .issuerId)
            signingKeys = try container.decodeIfPresent([SigningKeyFile].self, forKey: .signingKeys) ?? []
            rootCertificates = try container.decodeIfPresent([String].self, forKey: .rootCertificates) ?? []
            defaultMessageIdentifier = try container.decodeIfPresent(String.self, forKey: .defaultMessageIdentifier)
            userTokenSecretFile = try container.decodeIfPresent(String.self, forKey: .userTokenSecretFile)
            previousUserTokenSecretFile = try container.decodeIfPresent(String.self, forKey: .previousUserTokenSecretFile)
            serverAPI = try container.decodeIfPresent(ServerAPI.self, forKey: .serverAPI)
            if var api = serverAPI {
                try api.resolve(signingKeys: signingKeys, appIssuerId: issuerId, container: container)
                serverAPI = api
            }
        }
    }

    /// An App Store Connect In-App Purchase key for the App Store Server API.
    ///
    /// The same kind of key signs offers: Apple generates one In-App Purchase key (a `.p8`) for both, so
    /// `signingKey: KEYID` may name one of the app's `signingKeys` instead of repeating its id and file, and
    /// `issuerId` defaults to the app's.
    public struct ServerAPI: Decodable, Sendable {
        /// The key's id (App Store Connect, Users and Access, Integrations, In-App Purchase).
        public var keyId: String
        /// The team's issuer id (same page); the app's `issuerId` when not given.
        public var issuerId: String
        /// The key's `.p8` file.
        public var file: String
        /// Overrides Apple's URL for every environment (a proxy, or a test's stand-in); nil: Apple's URL for each.
        public var baseURL: String?
        /// The keyId of one of the app's `signingKeys` to use here too; nil when `keyId` and `file` are given.
        public var signingKey: String?

        public init(keyId: String, issuerId: String, file: String, baseURL: String? = nil) {
            self.keyId = keyId
            self.issuerId = issuerId
            self.file = file
            self.baseURL = baseURL
        }

        enum CodingKeys: String, ConfigKeys { case keyId, issuerId, file, baseURL, signingKey }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.configContainer(keyedBy: CodingKeys.self)
            signingKey = try container.decodeIfPresent(String.self, forKey: .signingKey)
            baseURL = try container.decodeIfPresent(String.self, forKey: .baseURL)
            issuerId = try container.decodeIfPresent(String.self, forKey: .issuerId) ?? ""
            if signingKey == nil {
                keyId = try container.decode(String.self, forKey: .keyId)
                file = try container.decode(String.self, forKey: .file)
            } else {
                for key in [CodingKeys.keyId, .file] where container.contains(key) {
                    throw DecodingError.dataCorruptedError(
                        forKey: key,
                        in: container,
                        debugDescription: "give either signingKey or keyId and file, not both: signingKey names the key and its file"
                    )
                }
                keyId = ""
                file = ""
            }
        }

        /// Fills in what `signingKey` names and the app's issuer id; errors name the app's `serverAPI`.
        mutating func resolve(
            signingKeys: [SigningKeyFile],
            appIssuerId: String?,
            container: KeyedDecodingContainer<App.CodingKeys>
        ) throws {
            if let signingKey {
                guard let key = signingKeys.first(where: { $0.keyId == signingKey }) else {
                    let known = signingKeys.map(\.keyId).joined(separator: ", ")
                    throw DecodingError.dataCorruptedError(
                        forKey: .serverAPI,
                        in: container,
                        debugDescription: "signingKey \(signingKey) is not one of the app's signingKeys (\(known.isEmpty ? "none" : known))"
                    )
                }
                keyId = key.keyId
                file = key.file
            }
            if issuerId.isEmpty {
                guard let appIssuerId, !appIssuerId.isEmpty else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .serverAPI,
                        in: container,
                        debugDescription:
                            "issuerId is missing: give it here or as the app's issuerId (App Store Connect, Users and Access, Integrations)"
                    )
                }
                issuerId = appIssuerId
            }
        }
    }

    /// Periodic reconciliation by the worker role (`reclaim reconcile` on a timer).
    public struct Reconciliation: Decodable, Sendable {
        /// How often; 0s turns it off. One worker process at a time runs it (an advisory lock).
        public var interval: ConfigDuration = ConfigDuration(seconds: 3600)
        /// How far back each run asks Apple's notification history.
        public var lookBack: ConfigDuration = ConfigDuration(seconds: 72 * 3600)

        public init() {}

        public init(from decoder: any Decoder) throws {
            let container = try decoder.configContainer(keyedBy: CodingKeys.self)
            interval = try container.decodeDurationIfPresent(forKey: .interval) ?? interval
            lookBack = try container.decodeDurationIfPresent(forKey: .lookBack) ?? lookBack
        }

        enum CodingKeys: String, ConfigKeys { case interval, lookBack }
    }

    public struct SigningKeyFile: Decodable, Sendable {
        public var keyId: String
        public var file: String

        public init(keyId: String, file: String) {
            self.keyId = keyId
            self.file = file
        }

        enum CodingKeys: String, ConfigKeys { case keyId, file }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.configContainer(keyedBy: CodingKeys.self)
            keyId = try container.decode(String.self, forKey: .keyId)
            file = try container.decode(String.self, forKey: .file)
        }
    }

    /// A win-back or retention campaign (see ``ReclaimDomain/Campaign`` for the meaning of each key).
    public struct Campaign: Decodable, Sendable {
        public var id: String
        /// Bundle id of the app.
        public var app: String
        /// `TYPE` or `TYPE/SUBTYPE` of the notification that makes the subscriber eligible.
        public var trigger: String
        /// The offer; nil when the campaign lists `variants` instead.
        public var offer: Offer?
        /// An experiment: the offers to compare, each given to a share of new subscribers by its weight.
        public var variants: [Variant]?
        public var conditions: Conditions
        public var deliverableFor: ConfigDuration
        public var cooldown: ConfigDuration
        /// Fire this long after the trigger, re-checked then (0s: at once).
        public var delay: ConfigDuration
        /// How long after the trigger a delayed campaign may still fire; nil: delay plus one day.
        public var window: ConfigDuration?
        /// Most offers of this campaign per subscriber; nil for no limit.
        public var maxOffersPerSubscriber: Int?
        public var holdoutPercent: Int
        public var priority: Int
        /// ISO 8601 date or date-time (UTC when no zone is given); nil for no bound.
        public var startsAt: String?
        public var endsAt: String?
        /// Skip subscribers Apple already lists win-back offers for (default true).
        public var standAsideForWinBack: Bool
        /// Retention Messaging: the approved message Apple shows with this campaign's offer; without one the
        /// offer is not offered in Apple's cancellation sheet.
        public var messageIdentifier: String?

        public struct Offer: Decodable, Sendable {
            public var productId: String
            public var offerIdentifier: String

            enum CodingKeys: String, ConfigKeys { case productId, offerIdentifier }

            public init(from decoder: any Decoder) throws {
                let container = try decoder.configContainer(keyedBy: CodingKeys.self)
                productId = try container.decode(String.self, forKey: .productId)
                offerIdentifier = try container.decode(String.self, forKey: .offerIdentifier)
            }
        }

        /// One arm of an experiment.
        public struct Variant: Decodable, Sendable {
            public var id: String
            public var offer: Offer
            /// Relative share of new subscribers (default 1).
            public var weight: Int

            enum CodingKeys: String, ConfigKeys { case id, offer, weight }

            public init(from decoder: any Decoder) throws {
                let container = try decoder.configContainer(keyedBy: CodingKeys.self)
                id = try container.decode(String.self, forKey: .id)
                offer = try container.decode(Offer.self, forKey: .offer)
                weight = try container.decodeIfPresent(Int.self, forKey: .weight) ?? 1
            }
        }

        /// Who qualifies; every key is optional and every key given must hold.
        public struct Conditions: Decodable, Sendable {
            public var products: [String]?
            public var minimumTenure: ConfigDuration?
            public var expirationIntents: [Int]?
            public var storefronts: [String]?

            public init() {}

            public init(from decoder: any Decoder) throws {
                let container = try decoder.configContainer(keyedBy: CodingKeys.self)
                products = try container.decodeIfPresent([String].self, forKey: .products)
                minimumTenure = try container.decodeDurationIfPresent(forKey: .minimumTenure)
                expirationIntents = try container.decodeIfPresent([Int].self, forKey: .expirationIntents)
                storefronts = try container.decodeIfPresent([String].self, forKey: .storefronts)
            }

            enum CodingKeys: String, ConfigKeys { case products, minimumTenure, expirationIntents, storefronts }
        }

        enum CodingKeys: String, ConfigKeys {
            case id, app, trigger, offer, variants, conditions, deliverableFor, cooldown, maxOffersPerSubscriber, holdoutPercent, priority
            case startsAt, endsAt, standAsideForWinBack, messageIdentifier, delay, window
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.configContainer(keyedBy: CodingKeys.self)
            id = try container.decode(String.self, forKey: .id)
            app = try container.decode(String.self, forKey: .app)
            trigger = try container.decode(String.self, forKey: .trigger)
            offer = try container.decodeIfPresent(Offer.self, forKey: .offer)
            variants = try container.decodeIfPresent([Variant].self, forKey: .variants)
            conditions = try container.decodeIfPresent(Conditions.self, forKey: .conditions) ?? Conditions()
            deliverableFor = try container.decodeDurationIfPresent(forKey: .deliverableFor) ?? ConfigDuration(seconds: 7 * 86_400)
            cooldown = try container.decodeDurationIfPresent(forKey: .cooldown) ?? ConfigDuration(seconds: 90 * 86_400)
            delay = try container.decodeDurationIfPresent(forKey: .delay) ?? ConfigDuration(seconds: 0)
            window = try container.decodeDurationIfPresent(forKey: .window)
            maxOffersPerSubscriber = try container.decodeIfPresent(Int.self, forKey: .maxOffersPerSubscriber)
            holdoutPercent = try container.decodeIfPresent(Int.self, forKey: .holdoutPercent) ?? 0
            priority = try container.decodeIfPresent(Int.self, forKey: .priority) ?? 0
            startsAt = try container.decodeIfPresent(String.self, forKey: .startsAt)
            endsAt = try container.decodeIfPresent(String.self, forKey: .endsAt)
            standAsideForWinBack = try container.decodeIfPresent(Bool.self, forKey: .standAsideForWinBack) ?? true
            messageIdentifier = try container.decodeIfPresent(String.self, forKey: .messageIdentifier)
        }
    }

    /// Offer upkeep: the refresher's schedule.
    public struct Offers: Decodable, Sendable {
        /// How often the refresher looks for offers to re-sign and to expire.
        public var refreshInterval: ConfigDuration = ConfigDuration(seconds: 60)
        /// Stored signatures older than this are re-signed; Apple accepts a signature for 24 hours.
        public var resignAfter: ConfigDuration = ConfigDuration(seconds: 12 * 3600)

        public init() {}

        public init(from decoder: any Decoder) throws {
            let container = try decoder.configContainer(keyedBy: CodingKeys.self)
            refreshInterval = try container.decodeDurationIfPresent(forKey: .refreshInterval) ?? refreshInterval
            resignAfter = try container.decodeDurationIfPresent(forKey: .resignAfter) ?? resignAfter
        }

        enum CodingKeys: String, ConfigKeys { case refreshInterval, resignAfter }
    }

    /// HTTP server settings.
    public struct Server: Decodable, Sendable {
        /// Largest accepted request body in bytes (Apple's notifications are a few KiB).
        public var maxBodyBytes: Int = 256 * 1024
        /// Keep this many rejected-input records for forensics; older ones are pruned.
        public var rejectedInputsKept: Int = 10_000
        /// Open connections at most; beyond it the server stops accepting until one closes.
        public var maxConnections: Int = 2048
        /// A connection with nothing read or written for this long is closed.
        public var idleTimeout: ConfigDuration = ConfigDuration(seconds: 30)
        /// Notifications waiting for a database transaction at most; beyond it ingest answers 503 with Retry-After.
        public var maxPendingNotifications: Int = 4096
        /// Requests a second one API key may make, sustained (one app key serves all of an app's users); beyond it 429.
        public var rateLimitPerKey: Int = 1000
        /// Requests one API key may make in a burst.
        public var rateLimitBurst: Int = 2000
        /// Failed authentications one client address may make a minute before its requests get 429.
        public var failedAuthenticationsPerMinute: Int = 30
        /// How long a process trusts a key it looked up (0s: look up every request); a revoked key keeps working
        /// this long at most.
        public var keyCacheTTL: ConfigDuration = ConfigDuration(seconds: 10)
        /// A request's head must arrive within this (a connection trickling its headers is closed).
        public var headerTimeout: ConfigDuration = ConfigDuration(seconds: 10)
        /// A request's body must arrive within this after its head.
        public var bodyTimeout: ConfigDuration = ConfigDuration(seconds: 30)
        /// PostgreSQL connections one `reclaim serve` process opens at most (on demand).
        public var databaseConnections: Int = 40
        /// Proxies (IP addresses or CIDRs) whose `X-Forwarded-For` names the client for per-client budgets; empty:
        /// the peer is the client.
        public var trustedProxies: [String] = []

        public init() {}

        public init(from decoder: any Decoder) throws {
            let container = try decoder.configContainer(keyedBy: CodingKeys.self)
            maxBodyBytes = try container.decodeIfPresent(Int.self, forKey: .maxBodyBytes) ?? maxBodyBytes
            rejectedInputsKept = try container.decodeIfPresent(Int.self, forKey: .rejectedInputsKept) ?? rejectedInputsKept
            maxConnections = try container.decodeIfPresent(Int.self, forKey: .maxConnections) ?? maxConnections
            idleTimeout = try container.decodeDurationIfPresent(forKey: .idleTimeout) ?? idleTimeout
            maxPendingNotifications = try container.decodeIfPresent(Int.self, forKey: .maxPendingNotifications) ?? maxPendingNotifications
            rateLimitPerKey = try container.decodeIfPresent(Int.self, forKey: .rateLimitPerKey) ?? rateLimitPerKey
            rateLimitBurst = try container.decodeIfPresent(Int.self, forKey: .rateLimitBurst) ?? rateLimitBurst
            failedAuthenticationsPerMinute =
                try container.decodeIfPresent(Int.self, forKey: .failedAuthenticationsPerMinute) ?? failedAuthenticationsPerMinute
            keyCacheTTL = try container.decodeDurationIfPresent(forKey: .keyCacheTTL) ?? keyCacheTTL
            headerTimeout = try container.decodeDurationIfPresent(forKey: .headerTimeout) ?? headerTimeout
            bodyTimeout = try container.decodeDurationIfPresent(forKey: .bodyTimeout) ?? bodyTimeout
            databaseConnections = try container.decodeIfPresent(Int.self, forKey: .databaseConnections) ?? databaseConnections
            trustedProxies = try container.decodeIfPresent([String].self, forKey: .trustedProxies) ?? trustedProxies
        }

        enum CodingKeys: String, ConfigKeys {
            case maxBodyBytes, rejectedInputsKept, maxConnections, idleTimeout, maxPendingNotifications, rateLimitPerKey, rateLimitBurst
            case failedAuthenticationsPerMinute, keyCacheTTL, headerTimeout, bodyTimeout, databaseConnections, trustedProxies
        }
    }

    /// Worker pool and queue settings.
    public struct Worker: Decodable, Sendable {
        /// Jobs run at once by one process.
        public var concurrency: Int = 8
        /// Jobs claimed per query.
        public var batchSize: Int = 16
        /// Poll interval when no NOTIFY arrives (a lost wake-up costs at most this).
        public var pollInterval: ConfigDuration = ConfigDuration(seconds: 2)
        /// How long a claimed job is leased before the rescuer hands it to another worker.
        public var lease: ConfigDuration = ConfigDuration(seconds: 60)
        /// Failed attempts before a job is dead.
        public var maxAttempts: Int = 20
        /// How long completed jobs are kept.
        public var completedRetention: ConfigDuration = ConfigDuration(seconds: 7 * 86_400)
        /// How long in-flight jobs may take to finish on shutdown before they are abandoned (and later rescued).
        public var shutdownTimeout: ConfigDuration = ConfigDuration(seconds: 30)

        public init() {}

        public init(from decoder: any Decoder) throws {
            let container = try decoder.configContainer(keyedBy: CodingKeys.self)
            concurrency = try container.decodeIfPresent(Int.self, forKey: .concurrency) ?? concurrency
            batchSize = try container.decodeIfPresent(Int.self, forKey: .batchSize) ?? batchSize
            pollInterval = try container.decodeIfPresent(ConfigDuration.self, forKey: .pollInterval) ?? pollInterval
            lease = try container.decodeIfPresent(ConfigDuration.self, forKey: .lease) ?? lease
            maxAttempts = try container.decodeIfPresent(Int.self, forKey: .maxAttempts) ?? maxAttempts
            completedRetention = try container.decodeIfPresent(ConfigDuration.self, forKey: .completedRetention) ?? completedRetention
            shutdownTimeout = try container.decodeIfPresent(ConfigDuration.self, forKey: .shutdownTimeout) ?? shutdownTimeout
        }

        enum CodingKeys: String, ConfigKeys {
            case concurrency, batchSize, pollInterval, lease, maxAttempts, completedRetention, shutdownTimeout
        }
    }

    /// Deadlines for every PostgreSQL operation of `reclaim serve` (``Database/Deadlines``): a connection that died
    /// with its server fails the operation at its deadline instead of holding it forever.
    public struct DatabaseTimeouts: Decodable, Sendable {
        /// Waiting for a connection from the pool, a connection attempt included.
        public var acquireTimeout: ConfigDuration = ConfigDuration(seconds: 5)
        /// One statement outside a transaction, every row read.
        public var queryTimeout: ConfigDuration = ConfigDuration(seconds: 15)
        /// One transaction, BEGIN to COMMIT (a worker's batch, a grant, an offer delivery). PostgreSQL itself ends a
        /// session idle in a transaction 5 s longer than this, so a vanished client's locks are released.
        public var transactionTimeout: ConfigDuration = ConfigDuration(seconds: 30)

        public init() {}

        public init(from decoder: any Decoder) throws {
            let container = try decoder.configContainer(keyedBy: CodingKeys.self)
            acquireTimeout = try container.decodeDurationIfPresent(forKey: .acquireTimeout) ?? acquireTimeout
            queryTimeout = try container.decodeDurationIfPresent(forKey: .queryTimeout) ?? queryTimeout
            transactionTimeout = try container.decodeDurationIfPresent(forKey: .transactionTimeout) ?? transactionTimeout
        }

        enum CodingKeys: String, ConfigKeys { case acquireTimeout, queryTimeout, transactionTimeout }

        public var deadlines: Database.Deadlines {
            Database.Deadlines(acquire: acquireTimeout.duration, query: queryTimeout.duration, transaction: transactionTimeout.duration)
        }
    }

    enum CodingKeys: String, ConfigKeys { case apps, campaigns, server, worker, offers, reconciliation, database }

    public init(
        apps: [App] = [],
        campaigns: [Campaign] = [],
        server: Server = Server(),
        worker: Worker = Worker(),
        offers: Offers = Offers(),
        reconciliation: Reconciliation = Reconciliation(),
        database: DatabaseTimeouts = DatabaseTimeouts()
    ) {
        self.apps = apps
        self.campaigns = campaigns
        self.server = server
        self.worker = worker
        self.offers = offers
        self.reconciliation = reconciliation
        self.database = database
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.configContainer(keyedBy: CodingKeys.self)
        apps = try container.decodeIfPresent([App].self, forKey: .apps) ?? []
        campaigns = try container.decodeIfPresent([Campaign].self, forKey: .campaigns) ?? []
        server = try container.decodeIfPresent(Server.self, forKey: .server) ?? Server()
        worker = try container.decodeIfPresent(Worker.self, forKey: .worker) ?? Worker()
        offers = try container.decodeIfPresent(Offers.self, forKey: .offers) ?? Offers()
        reconciliation = try container.decodeIfPresent(Reconciliation.self, forKey: .reconciliation) ?? Reconciliation()
        database = try container.decodeIfPresent(DatabaseTimeouts.self, forKey: .database) ?? DatabaseTimeouts()
    }
}
