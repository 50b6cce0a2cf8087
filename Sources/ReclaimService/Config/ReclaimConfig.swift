import Foundation
import ReclaimDomain
import ReclaimStore
import Yams

/// Reclaim's configuration: the YAML file named by `RECLAIM_CONFIG`.
///
/// Every key is documented in docs/configuration.md, with its default. An unknown key is refused with its path and the
/// nearest known key (``ConfigKeys``): a typo must not quietly turn a setting off. Missing optional sections take
/// defaults.
public struct ReclaimConfig: Decodable, Sendable {
    public var apps: [App]
    public var campaigns: [Campaign]
    public var server: Server
    public var worker: Worker
    public var offers: Offers
    public var reconciliation: Reconciliation
    public var database: DatabaseSettings
    public var forwarding: Forwarding

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
        /// How long a Retention Messaging answer waits for the database (reading, recording) before answering `{}`:
        /// Apple's deadline is about 700 ms, and its own fallback is what `{}` gets.
        public var retentionBudgetMilliseconds: Int = 300
        /// What `retentionBudgetMilliseconds` may be. Apple's performance test for the realtime URL: "the server must
        /// respond within approximately 700 ms"; a budget past that answers after Apple has already shown its default.
        public static let retentionBudgetLimits = 10...700

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
            retentionBudgetMilliseconds =
                try container.decodeIfPresent(Int.self, forKey: .retentionBudgetMilliseconds) ?? retentionBudgetMilliseconds
        }

        enum CodingKeys: String, ConfigKeys {
            case maxBodyBytes, rejectedInputsKept, maxConnections, idleTimeout, maxPendingNotifications, rateLimitPerKey, rateLimitBurst
            case failedAuthenticationsPerMinute, keyCacheTTL, headerTimeout, bodyTimeout, databaseConnections, trustedProxies
            case retentionBudgetMilliseconds
        }
    }

    /// Worker pool and queue settings.
    public struct Worker: Decodable, Sendable {
        /// Batches run at once by one process (lanes).
        public var concurrency: Int = Worker.defaultConcurrency
        /// The machine's cores, from 2 to 8: a lane's batch is mostly CPU (two ECDSA verifications and two
        /// signatures per notification) between two set-based statements, so lanes beyond the cores only split
        /// the same work into smaller, costlier batches. `scripts/bench e2e` on 2 cores: 1,798 notifications/s
        /// with 2 lanes, 1,618 with 4, 1,507–1,621 with 8.
        public static let defaultConcurrency = min(8, max(2, ProcessInfo.processInfo.activeProcessorCount))
        /// Jobs that call Apple (refund answers) run at most this many at once per process, on lanes of their own,
        /// outside any transaction: a slow Apple holds up none of the other jobs.
        public var callConcurrency: Int = 4
        /// Jobs claimed per query.
        public var batchSize: Int = 64
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
            callConcurrency = try container.decodeIfPresent(Int.self, forKey: .callConcurrency) ?? callConcurrency
            pollInterval = try container.decodeIfPresent(ConfigDuration.self, forKey: .pollInterval) ?? pollInterval
            lease = try container.decodeIfPresent(ConfigDuration.self, forKey: .lease) ?? lease
            maxAttempts = try container.decodeIfPresent(Int.self, forKey: .maxAttempts) ?? maxAttempts
            completedRetention = try container.decodeIfPresent(ConfigDuration.self, forKey: .completedRetention) ?? completedRetention
            shutdownTimeout = try container.decodeIfPresent(ConfigDuration.self, forKey: .shutdownTimeout) ?? shutdownTimeout
        }

        enum CodingKeys: String, ConfigKeys {
            case concurrency, callConcurrency, batchSize, pollInterval, lease, maxAttempts, completedRetention, shutdownTimeout
        }
    }

    /// Deadlines for every PostgreSQL operation of `reclaim serve` (``Database/Deadlines``): a connection that died
    /// with its server fails the operation at its deadline instead of holding it forever. And how the hot statements
    /// are sent (``PreparedStatements``): `unnamed` behind a pooler that does not track prepared statements.
    public struct DatabaseSettings: Decodable, Sendable {
        /// Waiting for a connection from the pool, a connection attempt included.
        public var acquireTimeout: ConfigDuration = ConfigDuration(seconds: 5)
        /// One statement outside a transaction, every row read.
        public var queryTimeout: ConfigDuration = ConfigDuration(seconds: 15)
        /// One transaction, BEGIN to COMMIT (a worker's batch, a grant, an offer delivery). PostgreSQL itself ends a
        /// session idle in a transaction 5 s longer than this, so a vanished client's locks are released.
        public var transactionTimeout: ConfigDuration = ConfigDuration(seconds: 30)
        /// `named` (prepared once per connection) or `unnamed` (PgBouncer before 1.21 in transaction mode).
        public var preparedStatements: PreparedStatements = .named

        public init() {}

        public init(from decoder: any Decoder) throws {
            let container = try decoder.configContainer(keyedBy: CodingKeys.self)
            acquireTimeout = try container.decodeDurationIfPresent(forKey: .acquireTimeout) ?? acquireTimeout
            queryTimeout = try container.decodeDurationIfPresent(forKey: .queryTimeout) ?? queryTimeout
            transactionTimeout = try container.decodeDurationIfPresent(forKey: .transactionTimeout) ?? transactionTimeout
            if let text = try container.decodeIfPresent(String.self, forKey: .preparedStatements) {
                guard let mode = PreparedStatements(rawValue: text) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .preparedStatements,
                        in: container,
                        debugDescription: "'\(LogText.bounded(text, limit: 40))' is neither named nor unnamed"
                    )
                }
                preparedStatements = mode
            }
        }

        enum CodingKeys: String, ConfigKeys { case acquireTimeout, queryTimeout, transactionTimeout, preparedStatements }

        public var deadlines: Database.Deadlines {
            Database.Deadlines(acquire: acquireTimeout.duration, query: queryTimeout.duration, transaction: transactionTimeout.duration)
        }
    }

    enum CodingKeys: String, ConfigKeys { case apps, campaigns, server, worker, offers, reconciliation, database, forwarding }

    public init(
        apps: [App] = [],
        campaigns: [Campaign] = [],
        server: Server = Server(),
        worker: Worker = Worker(),
        offers: Offers = Offers(),
        reconciliation: Reconciliation = Reconciliation(),
        database: DatabaseSettings = DatabaseSettings(),
        forwarding: Forwarding = Forwarding()
    ) {
        self.apps = apps
        self.campaigns = campaigns
        self.server = server
        self.worker = worker
        self.offers = offers
        self.reconciliation = reconciliation
        self.database = database
        self.forwarding = forwarding
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.configContainer(keyedBy: CodingKeys.self)
        apps = try container.decodeIfPresent([App].self, forKey: .apps) ?? []
        campaigns = try container.decodeIfPresent([Campaign].self, forKey: .campaigns) ?? []
        server = try container.decodeIfPresent(Server.self, forKey: .server) ?? Server()
        worker = try container.decodeIfPresent(Worker.self, forKey: .worker) ?? Worker()
        offers = try container.decodeIfPresent(Offers.self, forKey: .offers) ?? Offers()
        reconciliation = try container.decodeIfPresent(Reconciliation.self, forKey: .reconciliation) ?? Reconciliation()
        database = try container.decodeIfPresent(DatabaseSettings.self, forKey: .database) ?? DatabaseSettings()
        forwarding = try container.decodeIfPresent(Forwarding.self, forKey: .forwarding) ?? Forwarding()
    }
}
