import Logging
import NIOCore
import NIOPosix
import PostgresNIO

extension DatabaseURL {
    /// PostgreSQL could not be reached or refused the connection; says where and why, never the password.
    public struct Unreachable: Error, CustomStringConvertible {
        public let description: String
    }

    /// Opens and closes one connection within ``connectTimeout``, so a command against a wrong port, a missing
    /// database or a wrong password fails at once with PostgreSQL's reason, instead of waiting on a pool that retries.
    public func checkConnection(logger: Logger) async throws {
        let configuration: PostgresConnection.Configuration =
            if let socketDirectory {
                .init(unixSocketPath: "\(socketDirectory)/.s.PGSQL.\(port)", username: username, password: password, database: database)
            } else {
                .init(
                    host: host,
                    port: port,
                    username: username,
                    password: password,
                    database: database,
                    tls: requireTLS ? .require(try .init(configuration: .makeClientConfiguration())) : .disable
                )
            }
        var silenced = logger
        silenced.logLevel = max(logger.logLevel, .error)
        let quiet = silenced
        let location = self.location
        // PostgresConnection.Configuration is not Sendable (its TLS part); it is built here and only read there.
        let box = UncheckedBox(configuration)
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    let connection = try await PostgresConnection.connect(
                        on: MultiThreadedEventLoopGroup.singleton.any(),
                        configuration: box.value,
                        id: 0,
                        logger: quiet
                    )
                    try await connection.close()
                }
                if let timeout = connectTimeout {
                    group.addTask {
                        try await Task.sleep(for: timeout)
                        throw Unreachable(
                            description:
                                "cannot connect to PostgreSQL at \(location): no answer within \(timeout) (connect_timeout in the URL sets this)"
                        )
                    }
                }
                defer { group.cancelAll() }
                try await group.next()
            }
        } catch let error as Unreachable {
            throw error
        } catch {
            throw Unreachable(description: "cannot connect to PostgreSQL at \(location): \(Self.reason(error))")
        }
    }

    /// PostgreSQL's own message when it sent one (wrong password, no such database), else the network's.
    static func reason(_ error: any Error) -> String {
        guard let error = error as? PSQLError else { return "\(error)" }
        if let message = error.serverInfo?[.message] { return message }
        if let underlying = error.underlying { return "\(underlying)" }
        return "\(error.code)"
    }
}

/// Carries a value the compiler cannot prove Sendable into a child task that only reads it.
private struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
