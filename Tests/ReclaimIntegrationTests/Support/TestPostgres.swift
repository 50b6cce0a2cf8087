import Foundation
import Logging
import PostgresNIO
import ReclaimDev
import ReclaimStore

/// The test harness's PostgreSQL: one throw-away cluster per test run (initdb into a temporary
/// folder), with a migrated template database; each test gets its own copy of the template.
///
/// The cluster stops and its folder is removed when the test process ends, however it ends.
actor TestPostgres {
    static let shared = TestPostgres()
    static let logger: Logger = {
        var logger = Logger(label: "test-postgres")
        logger.logLevel = .warning
        return logger
    }()

    private var cluster: Task<EmbeddedPostgres, any Error>?
    private var counter = 0

    /// A throw-away cluster of its own, for tests that stop and start the server.
    /// `durable` keeps PostgreSQL's crash safety (fsync, synchronous_commit), for tests that crash the server.
    static func makeCluster(name: String, durable: Bool = false) async throws -> EmbeddedPostgres {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("reclaim-\(name)-\(getpid())-\(UUID().uuidString.prefix(8))")
        let cluster = EmbeddedPostgres(
            root: root,
            serverSettings: durable
                ? ["max_connections": "300"]
                : ["fsync": "off", "synchronous_commit": "off", "full_page_writes": "off", "max_connections": "300"]
        )
        try await cluster.initializeIfNeeded(logger: logger)
        try await cluster.stopWhenProcessEnds(removeFolder: true)
        try await cluster.start(logger: logger)
        return cluster
    }

    /// The shared cluster, made once: the first caller starts making it, later ones wait for the same task (the
    /// actor is reentrant across the awaits below, and used to make one cluster per test that arrived meanwhile).
    private func sharedCluster() async throws -> EmbeddedPostgres {
        if let cluster { return try await cluster.value }
        let making = Task { try await Self.makeSharedCluster() }
        cluster = making
        return try await making.value
    }

    private static func makeSharedCluster() async throws -> EmbeddedPostgres {
        let cluster = try await Self.makeCluster(name: "test")
        try await Database.withDatabase(patient(try cluster.url(database: "postgres")), maxConnections: 1, logger: Self.logger) { client in
            try await client.query("CREATE DATABASE reclaim_template", logger: Self.logger)
        }
        try await Database.withDatabase(patient(try cluster.url(database: "reclaim_template")), maxConnections: 1, logger: Self.logger) { client in
            try await Migrator().migrate(client: client, logger: Self.logger)
        }
        return cluster
    }

    /// A new database: migrated (a copy of the template) or empty.
    func newDatabase(migrated: Bool = true) async throws -> DatabaseURL {
        let cluster = try await sharedCluster()
        counter += 1
        let name = "t\(counter)"
        let template = migrated ? "reclaim_template" : "template0"
        try await Database.withDatabase(Self.patient(try cluster.url(database: "postgres")), maxConnections: 1, logger: Self.logger) { client in
            try await client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name) TEMPLATE \(template)"), logger: Self.logger)
        }
        return Self.patient(try cluster.url(database: name))
    }

    /// `url` with a connect_timeout of 30 s, which the servers the tests start inherit through the URL: on a
    /// machine busy with the whole suite a new backend (a fork, and a cold relation cache in a new database) has
    /// been seen to take over the default 5 s to answer.
    static func patient(_ url: DatabaseURL) -> DatabaseURL {
        var url = url
        url.connectTimeout = .seconds(30)
        return url
    }
}

/// Runs `body` with a client on a fresh database of its own.
func withTestDatabase<T: Sendable>(
    migrated: Bool = true,
    maxConnections: Int = 20,
    _ body: @Sendable (Database, DatabaseURL) async throws -> T
) async throws -> T {
    let url = try await TestPostgres.shared.newDatabase(migrated: migrated)
    return try await Database.withDatabase(url, maxConnections: maxConnections, logger: TestPostgres.logger) { client in
        try await body(client, url)
    }
}

extension EmbeddedPostgres {
    /// For a `defer`, which cannot await: stops the server (PostgreSQL's immediate stop) in a task of its own.
    func stopInBackground() {
        Task { try? await stop(immediate: true) }
    }
}
