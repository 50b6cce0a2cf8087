import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process started with posix_spawn, for the tests' processes.
///
/// Not Foundation's `Process`: on Linux its `run()` crashes now and then (a buffer over-read of `/proc/self/fd`
/// entries in `findMaximumOpenFromProcSelfFD`, swift-corelibs-foundation #5472, in Swift 6.3.1), and a test suite
/// that starts dozens of processes met it. Standard streams go to files, never pipes, so no child blocks on a
/// full pipe and no reader thread is needed.
public final class Subprocess: @unchecked Sendable {
    public let pid: pid_t
    private let lock = NSLock()
    private var exitStatus: Int32?

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Starts `executable` (a path, or a name looked up on PATH).
    /// - Parameters:
    ///   - environment: the child's environment; nil: this process's.
    ///   - directory: the child's working directory (through `/bin/sh -c 'cd …'`).
    ///   - input, output, errors: files for standard input, output (appended to) and error; nil: /dev/null.
    public init(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String]? = nil,
        directory: String? = nil,
        input: String? = nil,
        output: String? = nil,
        errors: String? = nil
    ) throws {
        var command = [executable] + arguments
        if let directory { command = ["/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", directory] + command }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, input ?? "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output ?? "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, errors ?? output ?? "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0o644)
        // Nothing else of this process reaches the child: an inherited database connection or listening socket
        // would stay open in it after this process closed its own (as Foundation's Process closes them too).
        #if os(Linux)
        _ = posix_spawn_file_actions_addclosefrom_np(&actions, 3)
        #endif
        let arguments = command.map { strdup($0) } + [nil]
        defer { for argument in arguments { free(argument) } }
        let variables = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for variable in variables { free(variable) } }
        // The child starts with no signal blocked and every signal at its default: posix_spawn otherwise hands it
        // the spawning thread's mask, and a test's thread may block SIGTERM (PgBouncer never saw its SIGTERM).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let result = posix_spawnp(&pid, command[0], &actions, &attributes, arguments, variables)
        guard result == 0 else { throw Failure(description: "could not start \(command[0]): \(String(cString: strerror(result)))") }
        self.pid = pid
    }

    /// Whether the child still runs; reaps it when it has ended.
    public var isRunning: Bool {
        lock.lock()
        defer { lock.unlock() }
        if exitStatus != nil { return false }
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        if result == pid || result < 0 { exitStatus = Self.decode(status) }
        return exitStatus == nil
    }

    /// Waits for the child to end and returns its exit status (128 + signal if killed), without holding a thread:
    /// it polls `waitpid(WNOHANG)` between `Task.sleep`s. A blocking `waitpid` on the cooperative pool (two threads
    /// on this machine) stalled every task of the test process for as long as the child ran.
    @discardableResult
    public func exitStatus() async -> Int32 {
        var pause = Duration.milliseconds(1)
        while isRunning {
            // In a task of its own: a cancelled caller's sleep would end at once, and this loop spin.
            await Task { [pause] in try? await Task.sleep(for: pause) }.value
            pause = min(pause * 2, .milliseconds(50))
        }
        return lock.withLock { exitStatus ?? 0 }
    }

    /// `signal`, then a task of its own reaps the child: for a `defer`, which cannot await.
    public func stopInBackground(_ signal: Int32 = SIGTERM) {
        self.signal(signal)
        Task { await self.exitStatus() }
    }

    public func signal(_ signal: Int32) {
        if isRunning { kill(pid, signal) }
    }

    private static func decode(_ status: Int32) -> Int32 {
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }

    /// Runs a program to its end: exit status, standard output and standard error, with `input` as standard input.
    /// Awaits the end without holding a thread (``exitStatus()``).
    public static func run(
        _ executable: String,
        _ arguments: [String],
        input: Data? = nil,
        environment: [String: String]? = nil,
        directory: String? = nil
    ) async throws -> (status: Int32, output: String, errors: String) {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("reclaim-subprocess-\(UUID().uuidString)").path
        defer { for suffix in [".in", ".out", ".err"] { try? FileManager.default.removeItem(atPath: base + suffix) } }
        if let input { try input.write(to: URL(fileURLWithPath: base + ".in")) }
        let process = try Subprocess(
            executable,
            arguments,
            environment: environment,
            directory: directory,
            input: input == nil ? nil : base + ".in",
            output: base + ".out",
            errors: base + ".err"
        )
        let status = await process.exitStatus()
        let output = (try? String(contentsOfFile: base + ".out", encoding: .utf8)) ?? ""
        let errors = (try? String(contentsOfFile: base + ".err", encoding: .utf8)) ?? ""
        return (status, output, errors)
    }
}

#if os(Linux)
/// glibc 2.34+ (`spawn.h`, behind _GNU_SOURCE, so not imported by the Glibc module): close every descriptor from
/// `from` on in the child.
@_silgen_name("posix_spawn_file_actions_addclosefrom_np")
private func posix_spawn_file_actions_addclosefrom_np(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ from: Int32) -> Int32
#endif
