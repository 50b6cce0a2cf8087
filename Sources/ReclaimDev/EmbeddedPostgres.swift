import Foundation
import Logging
import ReclaimStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A private PostgreSQL cluster in a folder of its own: for `reclaim dev` and the test harness.
///
/// It listens on a unix socket inside its folder and on a free TCP port on 127.0.0.1, never
/// touches a system-wide cluster, and trusts local connections (it is for development only).
/// PostgreSQL refuses to run as root; as root, every server command runs as the `postgres`
/// user (created by Debian's postgresql package), which then owns the folder.
public struct EmbeddedPostgres: Sendable {
    /// The folder holding `data/`, the socket, the log and the chosen port.
    public let root: URL
    /// Settings passed to the server with `-c`, e.g. `fsync=off` for throw-away test clusters.
    public var serverSettings: [String: String]
    /// The superuser created by initdb.
    public let username = "reclaim"

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public init(root: URL, serverSettings: [String: String] = [:]) {
        self.root = root.standardizedFileURL
        self.serverSettings = serverSettings
    }

    var dataDirectory: URL { root.appendingPathComponent("data") }
    var logFile: URL { root.appendingPathComponent("postgres.log") }
    var portFile: URL { root.appendingPathComponent("port") }

    /// The TCP port, chosen once at initialisation and kept in the folder so restarts reuse it.
    public var port: Int {
        get throws {
            guard let text = try? String(contentsOf: portFile, encoding: .utf8), let port = Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
            else { throw Failure(description: "\(root.path) holds no initialised cluster") }
            return port
        }
    }

    /// A URL for the given database on this cluster, through its unix socket.
    public func url(database: String = "postgres") throws -> DatabaseURL {
        DatabaseURL(username: username, port: try port, database: database, socketDirectory: root.path)
    }

    /// Creates the cluster unless the folder already holds one.
    public func initializeIfNeeded(logger: Logger) async throws {
        let fileManager = FileManager.default
        if fileManager.fileExists(atPath: dataDirectory.appendingPathComponent("PG_VERSION").path) { return }
        try fileManager.createDirectory(at: root, withIntermediateDirectories: true)
        try? fileManager.removeItem(at: dataDirectory)
        try String(LoopbackPort.free()).write(to: portFile, atomically: true, encoding: .utf8)
        try await handOverToServerUser()
        logger.info("creating PostgreSQL cluster", metadata: ["path": "\(dataDirectory.path)"])
        try await runServerTool(
            "initdb",
            ["-D", dataDirectory.path, "-U", username, "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"]
        )
    }

    /// Whether the cluster's server is running (perhaps left running by an earlier process).
    public func isRunning() async -> Bool {
        (try? await runServerTool("pg_ctl", ["-D", dataDirectory.path, "status"])) != nil
    }

    /// Starts the server unless it already runs, and waits until it accepts connections.
    public func start(logger: Logger) async throws {
        // Before asking pg_ctl, which takes any live process under the lock file's id for the server.
        removeStaleLockFile(logger: logger)
        if await isRunning() {
            logger.info("PostgreSQL already running", metadata: ["path": "\(root.path)"])
            return
        }
        var options = ["-k", root.path, "-p", String(try port), "-c", "listen_addresses=127.0.0.1"]
        for (key, value) in serverSettings.sorted(by: { $0.key < $1.key }) { options += ["-c", "\(key)=\(value)"] }
        // The server inherits pg_ctl's output; a pipe would never reach end-of-file while the server
        // runs, so pg_ctl's own output goes nowhere and its log file tells what went wrong.
        let pgCtl = try await Self.binDirectory().appendingPathComponent("pg_ctl").path
        let arguments = [
            "-D", dataDirectory.path, "-l", logFile.path, "-w", "-t", "60", "-o", options.map(Self.shellQuoted).joined(separator: " "), "start",
        ]
        let status = try await ChildProcess.run(Self.asServerUser([pgCtl] + arguments)).status
        guard status == 0 else {
            let log = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
            throw Failure(description: "PostgreSQL did not start (pg_ctl exit \(status)); end of \(logFile.path):\n\(log.suffix(2000))")
        }
        logger.info("PostgreSQL started", metadata: ["socket": "\(root.path)", "port": "\((try? port) ?? 0)"])
    }

    /// Stops the server. `immediate` is PostgreSQL's crash-like stop (recovery on next start).
    public func stop(immediate: Bool = false) async throws {
        guard await isRunning() else { return }
        try await runServerTool("pg_ctl", ["-D", dataDirectory.path, "-m", immediate ? "immediate" : "fast", "-w", "stop"])
    }

    /// A `postmaster.pid` left by a server that died with its machine or by `kill -9`, whose process id now
    /// belongs to another program: `pg_ctl status` would call that program the server, and the server would refuse
    /// to start. Removed when no postgres runs under that id (Linux: read from /proc; elsewhere left alone).
    private func removeStaleLockFile(logger: Logger) {
        #if os(Linux)
        let lockFile = dataDirectory.appendingPathComponent("postmaster.pid")
        guard let text = try? String(contentsOf: lockFile, encoding: .utf8),
            let pid = text.split(separator: "\n").first.flatMap({ Int32($0.trimmingCharacters(in: .whitespaces)) })
        else { return }
        let command = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        if command == "postgres" || command == "postmaster" {
            // A postgres, but perhaps another cluster's: a postmaster's working directory is its data directory.
            let cwd = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/cwd")
            guard let cwd, URL(fileURLWithPath: cwd).standardizedFileURL.path != dataDirectory.standardizedFileURL.path else { return }
        }
        logger.notice("removing a stale postmaster.pid", metadata: ["pid": "\(pid)", "path": "\(lockFile.path)"])
        try? FileManager.default.removeItem(at: lockFile)
        #endif
    }

    /// Makes the server stop when the process with `pid` ends, even by `kill -9` or a crash: a tiny shell
    /// watchdog polls it once a second. Test clusters use this so no server outlives its tests, and
    /// `reclaim dev` so its PostgreSQL never outlives Reclaim. Call it before ``start(logger:)``.
    ///
    /// The process becomes the cluster's owner (`owner.pid`), and a watchdog stops the server only while its
    /// process is still the owner: a `reclaim dev` started right after another one died takes the running server
    /// over, and the dead one's watchdog leaves it alone. Claim and stop take the same lock (`owner.lock`, with
    /// flock(1) where it exists), so a claim either comes first or finds the server stopped.
    /// - Parameter immediate: PostgreSQL's crash-like stop, for throw-away test clusters; otherwise a fast stop,
    ///   which checkpoints so the next start needs no recovery.
    public func stopWhenProcessEnds(pid: Int32 = getpid(), removeFolder: Bool = false, immediate: Bool = true) async throws {
        try claimOwnership(pid: pid)
        let pgCtl = try await Self.binDirectory().appendingPathComponent("pg_ctl").path
        let stop = Self.asServerUser([pgCtl, "-D", dataDirectory.path, "-m", immediate ? "immediate" : "fast", "stop"])
            .map(Self.shellQuoted).joined(separator: " ")
        let ownerCheck = "[ \"$(cat \(Self.shellQuoted(ownerFile.path)) 2>/dev/null)\" = \(pid) ]"
        let stopIfOwner = "\(ownerCheck) && \(stop) >/dev/null 2>&1"
        let lock = Self.shellQuoted(ownerLockFile.path)
        let locked = "if command -v flock >/dev/null 2>&1; then flock \(lock) sh -c \(Self.shellQuoted(stopIfOwner)); else \(stopIfOwner); fi"
        let cleanup = removeFolder ? "; rm -rf \(Self.shellQuoted(root.path))" : ""
        // It ignores the terminal's signals (Ctrl-C, a closed terminal reach the whole process group), so that it
        // outlives Reclaim long enough to stop the server.
        // A process killed but not yet reaped by its parent (a zombie) still answers `kill -0`: on Linux its state
        // in /proc says it has ended.
        let alive = "kill -0 \(pid) 2>/dev/null && ! grep -q '^State:[[:space:]]*Z' /proc/\(pid)/status 2>/dev/null"
        try ChildProcess.launch(["/bin/sh", "-c", "trap '' INT HUP TERM; while \(alive); do sleep 1; done; \(locked)\(cleanup)"])
    }

    var ownerFile: URL { root.appendingPathComponent("owner.pid") }
    var ownerLockFile: URL { root.appendingPathComponent("owner.lock") }

    /// Records `pid` as the process whose end stops the server, under the lock the watchdogs stop it under.
    private func claimOwnership(pid: Int32) throws {
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let fd = open(ownerLockFile.path, O_CREAT | O_RDWR, 0o644)
        guard fd >= 0 else { throw Failure(description: "cannot open \(ownerLockFile.path): errno \(errno)") }
        defer { close(fd) }
        _ = flock(fd, LOCK_EX)
        defer { _ = flock(fd, LOCK_UN) }
        try String(pid).write(to: ownerFile, atomically: true, encoding: .utf8)
    }

    // MARK: - Helpers

    /// Where `initdb`, `pg_ctl` and `postgres` live: `$PG_BINDIR`, else `pg_config --bindir`, else the
    /// newest `/usr/lib/postgresql/N/bin` (Debian keeps them off PATH), else PATH.
    public static func binDirectory() async throws -> URL {
        let fileManager = FileManager.default
        if let dir = ProcessInfo.processInfo.environment["PG_BINDIR"], fileManager.fileExists(atPath: dir + "/initdb") {
            return URL(fileURLWithPath: dir)
        }
        if let dir = try? await capture("/bin/sh", ["-c", "pg_config --bindir 2>/dev/null"]).trimmingCharacters(in: .whitespacesAndNewlines),
            !dir.isEmpty, fileManager.fileExists(atPath: dir + "/initdb")
        {
            return URL(fileURLWithPath: dir)
        }
        let versions = (try? fileManager.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        for version in versions.compactMap(Int.init).sorted(by: >) {
            let dir = "/usr/lib/postgresql/\(version)/bin"
            if fileManager.fileExists(atPath: dir + "/initdb") { return URL(fileURLWithPath: dir) }
        }
        if let dir = try? await capture("/bin/sh", ["-c", "dirname \"$(command -v initdb)\""]).trimmingCharacters(in: .whitespacesAndNewlines),
            !dir.isEmpty, fileManager.fileExists(atPath: dir + "/initdb")
        {
            return URL(fileURLWithPath: dir)
        }
        throw Failure(
            description:
                "PostgreSQL server binaries (initdb, pg_ctl) not found: install them (Debian: apt-get install -y postgresql) or set PG_BINDIR"
        )
    }

    private static var isRoot: Bool { geteuid() == 0 }

    private static func asServerUser(_ command: [String]) -> [String] {
        isRoot ? ["runuser", "-u", "postgres", "--"] + command : command
    }

    /// As root, gives the folder to the `postgres` user, since the server refuses to run as root.
    private func handOverToServerUser() async throws {
        guard Self.isRoot else { return }
        _ = try await Self.capture("/usr/bin/env", ["chown", "-R", "postgres:postgres", root.path])
        // Every parent must be traversable by the server user.
        var parent = root.deletingLastPathComponent()
        while parent.path != "/" {
            _ = try? await Self.capture("/usr/bin/env", ["chmod", "o+x", parent.path])
            parent = parent.deletingLastPathComponent()
        }
    }

    @discardableResult
    private func runServerTool(_ tool: String, _ arguments: [String]) async throws -> String {
        let path = try await Self.binDirectory().appendingPathComponent(tool).path
        let command = Self.asServerUser([path] + arguments)
        return try await Self.capture("/usr/bin/env", command)
    }

    /// Runs a program and returns its standard output; throws with its output when it fails.
    @discardableResult
    static func capture(_ executable: String, _ arguments: [String]) async throws -> String {
        let result = try await ChildProcess.run([executable] + arguments)
        guard result.status == 0 else {
            throw Failure(description: "\(([executable] + arguments).joined(separator: " ")) failed (\(result.status)): \(result.output)")
        }
        return result.output
    }

    private static func shellQuoted(_ text: String) -> String {
        if text.allSatisfy({ $0.isLetter || $0.isNumber || "-_=./:".contains($0) }) { return text }
        return "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
