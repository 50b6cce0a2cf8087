import Foundation
import ReclaimDev
import ReclaimStore
import ReclaimTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A PgBouncer in transaction mode in front of the test cluster, on a loopback port of its own, as a team pools
/// Reclaim's connections. Debian's PgBouncer is 1.18, which does not track protocol-level prepared statements (1.21
/// does): a client's named statement may land on a server connection that never prepared it.
final class TestPgBouncer: @unchecked Sendable {
    let port: Int
    let directory: URL
    private let process: Subprocess

    /// The three session limits Reclaim sends as startup parameters (``DatabaseURL/clientConfiguration``): PgBouncer
    /// refuses a connection that sends a parameter it does not know, unless it is listed here, and then drops it.
    static let ignoredStartupParameters = "idle_in_transaction_session_timeout,statement_timeout,client_connection_check_interval"

    /// - Parameters:
    ///   - server: a URL of the cluster to pool (its socket folder and port; every database of it is served).
    ///   - poolSize: server connections per database and user.
    init(server: DatabaseURL, poolSize: Int) async throws {
        guard let executable = ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw PgBouncerFailure(description: "pgbouncer not found: scripts/install-deps --test installs it (apt-get install pgbouncer)")
        }
        port = try LoopbackPort.free()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("reclaim-pgbouncer-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let serverAddress = server.socketDirectory.map { "host=\($0)" } ?? "host=\(server.host)"
        try """
        [databases]
        * = \(serverAddress) port=\(server.port)
        [pgbouncer]
        listen_addr = 127.0.0.1
        listen_port = \(port)
        unix_socket_dir =
        auth_type = trust
        auth_file = \(directory.path)/userlist.txt
        pool_mode = transaction
        default_pool_size = \(poolSize)
        max_client_conn = 500
        ignore_startup_parameters = \(Self.ignoredStartupParameters)
        """.write(to: directory.appendingPathComponent("pgbouncer.ini"), atomically: true, encoding: .utf8)
        // trust: no password asked, but the user must be listed.
        try "\"\(server.username)\" \"\"\n".write(to: directory.appendingPathComponent("userlist.txt"), atomically: true, encoding: .utf8)
        chmod(directory.path, 0o755)
        // PgBouncer refuses to run as root: as root, run it as the cluster's server user (without a fork, so that
        // the process signalled is PgBouncer itself).
        let command =
            geteuid() == 0
            ? ["/usr/bin/setpriv", "--reuid=postgres", "--regid=postgres", "--clear-groups", executable]
            : [executable]
        process = try Subprocess(
            command[0],
            Array(command.dropFirst()) + [directory.appendingPathComponent("pgbouncer.ini").path],
            output: directory.appendingPathComponent("pgbouncer.log").path
        )
        try await waitUntilListening()
    }

    /// The pooled database `database`, as Reclaim's DATABASE_URL would name it.
    func url(database: String, user: String) -> DatabaseURL {
        var url = DatabaseURL(username: user, host: "127.0.0.1", port: port, database: database)
        url.connectTimeout = .seconds(30)
        return url
    }

    var log: String { (try? String(contentsOf: directory.appendingPathComponent("pgbouncer.log"), encoding: .utf8)) ?? "" }

    /// Stops PgBouncer and removes its folder, in a task of its own (for a `defer`, which cannot await).
    func stopInBackground() {
        let (process, directory) = (self.process, self.directory)
        Task {
            process.signal(SIGTERM)  // immediate shutdown (SIGINT waits for every client to leave)
            await process.exitStatus()
            try? FileManager.default.removeItem(at: directory)
        }
    }

    private func waitUntilListening() async throws {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            guard process.isRunning else { throw PgBouncerFailure(description: "pgbouncer exited: \(log)") }
            let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            close(socket)
            if connected == 0 { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw PgBouncerFailure(description: "pgbouncer did not listen on \(port) within 20 s: \(log)")
    }
}

struct PgBouncerFailure: Error, CustomStringConvertible {
    let description: String
}
