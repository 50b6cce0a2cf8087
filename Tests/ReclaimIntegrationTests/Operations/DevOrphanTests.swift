import Foundation
import ReclaimStore
import ReclaimTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Issue 26: when `reclaim dev` dies (a trap, kill -9), its private PostgreSQL must not live on as an orphan, and
/// the next `reclaim dev` in the same folder starts as usual with the same data.
@Suite("reclaim dev's PostgreSQL never outlives it", .poolWatchdog)
struct DevOrphanTests {
    /// The postmaster's process id, from the cluster's lock file.
    static func postmasterPID(_ root: URL) -> Int32? {
        let file = root.appendingPathComponent(".reclaim/pg/data/postmaster.pid")
        guard let text = try? String(contentsOf: file, encoding: .utf8) else { return nil }
        return text.split(separator: "\n").first.flatMap { Int32($0) }
    }

    static func start(in root: URL, port: Int) throws -> Subprocess {
        var environment = ProcessInfo.processInfo.environment
        environment["DATABASE_URL"] = nil
        return try Subprocess(
            try Binaries.path("reclaim"),
            ["dev", "--port", "\(port)"],
            environment: environment,
            directory: root.path,
            output: root.appendingPathComponent("dev.log").path
        )
    }

    static func ready(port: Int) async -> Bool {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/readyz")!)
        request.timeoutInterval = 2
        return (try? await URLSession.shared.boundedData(for: request).1 as? HTTPURLResponse)?.statusCode == 200
    }

    @Test("kill -9 of reclaim dev stops its PostgreSQL; the next reclaim dev serves the same database")
    func killNine() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("reclaim-dev-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        // The cluster runs as the postgres user when the tests run as root: it must reach the folder.
        chmod(root.path, 0o755)
        _ = FileManager.default.createFile(atPath: root.appendingPathComponent("dev.log").path, contents: nil)
        defer { try? FileManager.default.removeItem(at: root) }

        let port = try LoopbackPort.free()
        let first = try Self.start(in: root, port: port)
        try await eventually("reclaim dev is ready", timeout: .seconds(120), every: .milliseconds(200)) { await Self.ready(port: port) }
        let postmaster = try #require(Self.postmasterPID(root))
        #expect(kill(postmaster, 0) == 0)

        // Not waited for: like a crash, the process is gone before anyone reaps it (a zombie, for a while).
        kill(first.pid, SIGKILL)
        try await eventually("the orphaned PostgreSQL stops", timeout: .seconds(20), every: .milliseconds(200)) {
            kill(postmaster, 0) != 0
        }

        let second = try Self.start(in: root, port: port)
        try await eventually("the next reclaim dev is ready", timeout: .seconds(120), every: .milliseconds(200)) { await Self.ready(port: port) }
        // Started again at once after a kill -9: the new run takes the running server over, and the dead run's
        // watchdog, which fires within a second, must leave it alone.
        kill(second.pid, SIGKILL)
        let third = try Self.start(in: root, port: port)
        defer { third.signal(SIGINT) }
        try await eventually("the run after that is ready", timeout: .seconds(120), every: .milliseconds(200)) { await Self.ready(port: port) }
        try await Task.sleep(for: .seconds(3))
        #expect(await Self.ready(port: port), "the dead run's watchdog stopped the server the new run uses")
        let log = try String(contentsOf: root.appendingPathComponent("dev.log"), encoding: .utf8)
        #expect(log.components(separatedBy: "creating PostgreSQL cluster").count == 2, "the cluster is created once and reused")
        third.signal(SIGINT)
        try await eventually("reclaim dev stops on Ctrl-C", timeout: .seconds(30), every: .milliseconds(100)) { !third.isRunning }
    }

    @Test("a postmaster.pid whose process id now belongs to another of the server user's programs does not stop the start")
    func stalePostmasterPID() async throws {
        // The server user is another user only as root (runuser); elsewhere the server runs as the caller.
        guard geteuid() == 0 else { return }
        let cluster = try await TestPostgres.makeCluster(name: "stale")
        let dataDirectory = cluster.root.appendingPathComponent("data")
        let lockFile = dataDirectory.appendingPathComponent("postmaster.pid")
        let contents = try String(contentsOf: lockFile, encoding: .utf8)
        try await cluster.stop()
        // A machine crash leaves the file; after the reboot its process id is some other program of the same user.
        let pidFile = cluster.root.appendingPathComponent("squatter.pid")
        let squatter = try Subprocess("/usr/sbin/runuser", ["-u", "postgres", "--", "/bin/sh", "-c", "echo $$ > \(pidFile.path); exec sleep 120"])
        defer { squatter.signal(SIGTERM) }
        try await eventually("the squatter runs", timeout: .seconds(30)) {
            Int32((try? String(contentsOf: pidFile, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") != nil
        }
        let squatterPID = try String(contentsOf: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        var lines = contents.components(separatedBy: "\n")
        lines[0] = squatterPID
        try lines.joined(separator: "\n").write(to: lockFile, atomically: false, encoding: .utf8)
        defer { if let pid = Int32(squatterPID) { kill(pid, SIGKILL) } }

        try await cluster.start(logger: TestPostgres.logger)
        // pg_ctl status would call the squatter the server: the lock file must now name a real postmaster.
        let postmaster = try String(contentsOf: lockFile, encoding: .utf8).split(separator: "\n").first.map(String.init)
        #expect(postmaster != nil && postmaster != squatterPID)
        #expect((try? String(contentsOfFile: "/proc/\(postmaster ?? "0")/comm", encoding: .utf8))?.hasPrefix("postgres") == true)
        try await cluster.stop()
    }
}
