import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs programs with `posix_spawn` and `waitpid`.
///
/// Foundation's `Process` was seen never to notice the exit of `pg_ctl start` (whose server
/// daemonizes and outlives it), leaving the caller blocked forever; plain POSIX has no such
/// surprises. Output is captured through a file, not a pipe, for the same reason: a daemon that
/// inherits a pipe keeps it open and the reader never sees end-of-file.
enum ChildProcess {
    struct Result {
        let status: Int32
        let output: String
    }

    struct SpawnFailure: Error, CustomStringConvertible {
        let description: String
    }

    /// Runs `arguments` (the first is looked up on PATH), waits for it, and returns its exit
    /// status and combined standard output and error.
    ///
    /// The wait holds no thread: it polls `waitpid(WNOHANG)` between `Task.sleep`s. A blocking `waitpid` here ran on
    /// Swift's cooperative pool (as many threads as cores: two on the machines this runs on), and `initdb` or
    /// `pg_ctl -w start` stalled every other task of the process for seconds.
    static func run(_ arguments: [String]) async throws -> Result {
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("reclaim-child-\(UUID().uuidString)").path
        defer { unlink(outputPath) }
        let pid = try spawn(arguments, outputPath: outputPath)
        var status: Int32 = 0
        var pause = Duration.milliseconds(1)
        while true {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid { break }
            if result == -1 {
                guard errno == EINTR else { throw SpawnFailure(description: "waitpid failed for \(arguments[0]): errno \(errno)") }
                continue
            }
            // Not cancellable: a child is always reaped, so no zombie is left behind.
            // In a task of its own: a cancelled caller's sleep would end at once, and this loop spin.
            await Task { [pause] in try? await Task.sleep(for: pause) }.value
            pause = min(pause * 2, .milliseconds(50))
        }
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        // WIFEXITED / WEXITSTATUS, spelled out since the C macros are not imported.
        let exitStatus = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return Result(status: exitStatus, output: output)
    }

    /// Starts `arguments` in the background and does not wait for it.
    static func launch(_ arguments: [String]) throws {
        _ = try spawn(arguments, outputPath: "/dev/null")
    }

    private static func spawn(_ arguments: [String], outputPath: String) throws -> pid_t {
        var fileActions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&fileActions)
        defer { posix_spawn_file_actions_destroy(&fileActions) }
        posix_spawn_file_actions_addopen(&fileActions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&fileActions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&fileActions, 1, 2)
        // Nothing else of this process reaches the child, nor PostgreSQL after it: it inherited every descriptor
        // open at that moment (sockets, database connections, files), and a server started by a busy process
        // refused to start ("insufficient file descriptors available to start server process").
        #if os(Linux)
        _ = posix_spawn_file_actions_addclosefrom_np(&fileActions, 3)
        #endif

        let cArguments = arguments.map { strdup($0) } + [nil]
        defer { for argument in cArguments { free(argument) } }
        var pid: pid_t = 0
        let result = posix_spawnp(&pid, arguments[0], &fileActions, nil, cArguments, environ)
        guard result == 0 else {
            throw SpawnFailure(description: "could not start \(arguments[0]): \(String(cString: strerror(result)))")
        }
        return pid
    }
}

#if os(Linux)
/// glibc 2.34+ (`spawn.h`, behind _GNU_SOURCE, so not imported by the Glibc module): close every descriptor from
/// `from` on in the child.
@_silgen_name("posix_spawn_file_actions_addclosefrom_np")
private func posix_spawn_file_actions_addclosefrom_np(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ from: Int32) -> Int32
#endif
