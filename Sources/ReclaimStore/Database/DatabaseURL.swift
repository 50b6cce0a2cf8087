import Foundation
import NIOSSL
import PostgresNIO

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
    }

    /// The URL again, with the password masked: safe for logs.
    public var description: String {
        var text = "postgres://\(username)\(password == nil ? "" : ":***")@\(host):\(port)/\(database)"
        if let socketDirectory { text += "?host=\(socketDirectory)" }
        return text
    }

    /// The URL with its password, for handing to other tools (psql, pgbench).
    public var connectionString: String {
        var text = "postgres://\(username)"
        if let password { text += ":\(password.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? password)" }
        text += "@\(host):\(port)/\(database)"
        if let socketDirectory { text += "?host=\(socketDirectory)" }
        return text
    }

    /// The same server, another database.
    public func with(database: String) -> DatabaseURL {
        var copy = self
        copy.database = database
        return copy
    }

    /// Configuration for `PostgresClient`.
    public func clientConfiguration(maxConnections: Int = 20) -> PostgresClient.Configuration {
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
        configuration.options.connectTimeout = .seconds(3)
        return configuration
    }

    /// Where the URL points, for messages: host and port (or socket folder), database and user; never the password.
    public var location: String {
        "\(socketDirectory.map { "socket \($0)/.s.PGSQL.\(port)" } ?? "\(host):\(port)"), database \(database), user \(username)"
    }
}
