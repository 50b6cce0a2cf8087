import Foundation
import NIOSSL
import PostgresNIO
import ReclaimDomain

/// A `DATABASE_URL` (`postgres://user:password@host:port/database?host=/socket/dir&sslmode=disable`),
/// turned into a PostgresNIO client configuration.
///
/// A `host` query parameter that is a directory selects the unix socket in it, as libpq does;
/// that is how `reclaim dev` and the tests reach their private PostgreSQL.
public struct DatabaseURL: Sendable, CustomStringConvertible {
    public var username: String
    public var password: String?
    public var host: String
    public var port: Int
    public var database: String
    public var socketDirectory: String?
    public var requireTLS: Bool
    /// Set for `sslmode=prefer` or `allow`: Reclaim then connects without TLS and never tries it, which those
    /// names hide; callers log this as a warning.
    public var sslModeWarning: String?
    /// libpq's `connect_timeout`: how long the first connection (``checkConnection(logger:)``, made by every
    /// command and by `serve` at start) may go unanswered before Reclaim gives up. Whole seconds, at least 2 as in
    /// libpq; 0 or less waits without limit (nil). Unset: 5 s, so a command against a silent host fails soon.
    public var connectTimeout: Duration? = Self.defaultConnectTimeout
    public static let defaultConnectTimeout: Duration = .seconds(5)

    public struct InvalidURL: Error, CustomStringConvertible {
        public let description: String
    }

    public init(
        username: String,
        password: String? = nil,
        host: String = "127.0.0.1",
        port: Int = 5432,
        database: String,
        socketDirectory: String? = nil,
        requireTLS: Bool = false
    ) {
        self.username = username
        self.password = password
        self.host = host
        self.port = port
        self.database = database
        self.socketDirectory = socketDirectory
        self.requireTLS = requireTLS
    }

    public init(_ text: String) throws {
        try Self.refuseSeveralHosts(text)
        guard let components = URLComponents(string: text),
            components.scheme == "postgres" || components.scheme == "postgresql"
        else {
            throw InvalidURL(description: "DATABASE_URL must look like postgres://user:password@host:5432/database")
        }
        let query = Dictionary((components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
        self.username = components.percentEncodedUser?.removingPercentEncoding ?? query["user"] ?? "postgres"
        self.password = components.percentEncodedPassword?.removingPercentEncoding ?? query["password"]
        self.host = components.host.flatMap { $0.isEmpty ? nil : $0 } ?? "127.0.0.1"
        self.port = components.port ?? query["port"].flatMap(Int.init) ?? 5432
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        self.database = path.isEmpty ? self.username : path
        self.socketDirectory = query["host"].flatMap { $0.hasPrefix("/") ? $0 : nil }
        switch query["sslmode"] ?? "disable" {
        case "disable": self.requireTLS = false
        case let mode where mode == "allow" || mode == "prefer":
            self.requireTLS = false
            self.sslModeWarning =
                "DATABASE_URL sslmode=\(mode): Reclaim connects WITHOUT TLS (it does not try TLS first); "
                + "use sslmode=require for TLS, or sslmode=disable to say plaintext is intended"
        case "require", "verify-ca", "verify-full": self.requireTLS = true
        case let other: throw InvalidURL(description: "DATABASE_URL sslmode=\(other) is not supported (use disable or require)")
        }
        if let text = query["connect_timeout"] {
            guard let seconds = Int(text.trimmingCharacters(in: .whitespaces)) else {
                throw InvalidURL(description: "DATABASE_URL connect_timeout=\(text) must be whole seconds")
            }
            // Clamped before it becomes a Duration: the URL is outside input.
            self.connectTimeout = seconds <= 0 ? nil : .seconds(min(max(seconds, 2), 86_400))
        }
    }

    /// libpq accepts several hosts (`postgres://a:5432,b:5432/db`, `?host=a,b`) and tries each in turn, with
    /// `target_session_attrs` picking the primary; PostgresNIO connects to one address. Rather than use the first host
    /// and stop working at the first failover, such a URL is refused, naming what does the choosing instead.
    private static func refuseSeveralHosts(_ text: String) throws {
        let instead =
            "Reclaim connects to one address: name one that always reaches the primary, such as HAProxy routing by "
            + "Patroni's health check or a Kubernetes Service of the leader (docs/operations.md, \"High availability and failover\")"
        let rest = text.split(separator: "://", maxSplits: 1).last ?? ""
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        let hosts = authority.split(separator: "@").last ?? ""
        if hosts.contains(",") {
            throw InvalidURL(description: "DATABASE_URL names several hosts (\(LogText.bounded(String(hosts), limit: 200))). \(instead)")
        }
        let query = URLComponents(string: text)?.queryItems ?? []
        for item in query where ["host", "hostaddr", "port"].contains(item.name) && (item.value ?? "").contains(",") {
            throw InvalidURL(
                description: "DATABASE_URL names several hosts (\(item.name)=\(LogText.bounded(item.value ?? "", limit: 200))). \(instead)"
            )
        }
        if let attributes = query.first(where: { $0.name == "target_session_attrs" })?.value, attributes != "any" {
            throw InvalidURL(
                description: "DATABASE_URL target_session_attrs=\(LogText.bounded(attributes, limit: 40)) is not supported. \(instead)"
            )
        }
    }

    /// The query part shared by ``description`` and ``connectionString``.
    private var queryText: String {
        var items: [String] = []
        if let socketDirectory { items.append("host=\(socketDirectory)") }
        if connectTimeout != Self.defaultConnectTimeout { items.append("connect_timeout=\(connectTimeout?.components.seconds ?? 0)") }
        return items.isEmpty ? "" : "?" + items.joined(separator: "&")
    }

    /// The URL again, with the password masked: safe for logs.
    public var description: String {
        "postgres://\(username)\(password == nil ? "" : ":***")@\(host):\(port)/\(database)" + queryText
    }

    /// The URL with its password, for handing to other tools (psql, pgbench).
    public var connectionString: String {
        var text = "postgres://\(username)"
        if let password { text += ":\(password.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? password)" }
        return text + "@\(host):\(port)/\(database)" + queryText
    }

    /// The same server, another database.
    public func with(database: String) -> DatabaseURL {
        var copy = self
        copy.database = database
        return copy
    }

    /// Configuration for `PostgresClient`, with the server-side timeouts that go with `deadlines`.
    public func clientConfiguration(maxConnections: Int = 20, deadlines: Database.Deadlines = .commandLine) -> PostgresClient.Configuration {
        var configuration: PostgresClient.Configuration
        if let socketDirectory {
            configuration = .init(
                unixSocketPath: "\(socketDirectory)/.s.PGSQL.\(port)",
                username: username,
                password: password,
                database: database
            )
        } else {
            configuration = .init(
                host: host,
                port: port,
                username: username,
                password: password,
                database: database,
                tls: requireTLS ? .require(.makeClientConfiguration()) : .disable
            )
        }
        configuration.options.maximumConnections = maxConnections
        configuration.options.minimumConnections = 0
        // Fail fast while the database is down, so callers can answer 503 rather than hang.
        configuration.options.connectTimeout = min(.seconds(3), deadlines.acquire)
        // PostgresNIO's keep-alive query has no timeout: on a connection cut by the network it would wait forever
        // and hold a pool slot for good. Without it, an idle connection closes after the pool's idle timeout (60 s),
        // and a dead one handed out before that costs one operation its deadline (``Database``), then is replaced.
        configuration.options.keepAliveBehavior = nil
        // The server's side of the deadlines, sent as startup parameters (no round trip per transaction; PgBouncer
        // must list them in `ignore_startup_parameters`, see docs/operations.md):
        // - a session that sits idle in a transaction past the transaction deadline lost its client (closed by a
        //   deadline, or cut off by the network): PostgreSQL ends it, releasing its row locks, which would
        //   otherwise keep its jobs from being rescued;
        // - no statement outlives the longest deadline: its caller gave up on it;
        // - a statement whose client closed the connection is ended within a second (PostgreSQL 14 and later),
        //   instead of running to its end for nobody.
        configuration.options.additionalStartupParameters = Self.sessionLimits(deadlines)
        return configuration
    }

    /// The session settings sent at start-up for `deadlines`, in milliseconds (``SessionLimits`` checks that they
    /// arrived: a pooler may drop them).
    public static func sessionLimits(_ deadlines: Database.Deadlines) -> [(String, String)] {
        let longest = max(deadlines.query, deadlines.transaction)
        return [
            ("idle_in_transaction_session_timeout", Self.milliseconds(deadlines.transaction + .seconds(5))),
            ("statement_timeout", Self.milliseconds(longest + .seconds(5))),
            ("client_connection_check_interval", "1000"),
        ]
    }

    private static func milliseconds(_ duration: Duration) -> String {
        String(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }

    /// Where the URL points, for messages: host and port (or socket folder), database and user; never the password.
    public var location: String {
        "\(socketDirectory.map { "socket \($0)/.s.PGSQL.\(port)" } ?? "\(host):\(port)"), database \(database), user \(username)"
    }
}
