import Foundation
import ReclaimTestSupport

/// Runs the independent implementations (openssl, python3 with `cryptography` and PyJWT) that check our signatures.
///
/// A missing tool is a test failure, not a skip: these checks are the evidence that Apple's verifier will accept
/// what we produce. CI installs them (`scripts/install-deps --test`: openssl from apt, PyJWT and cryptography in its virtual environment, `. scripts/lib/python-env` to use it).
enum ExternalTools {
    /// A tool that is missing or failed; the description says what to install or what it printed.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// What a finished process printed.
    struct Output {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    /// A fresh directory under the system temp dir; the caller removes it.
    static func makeTemporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("reclaim-signing-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Runs `body` with a temporary directory that is removed afterwards.
    static func withTemporaryDirectory<T>(_ body: (URL) async throws -> T) async throws -> T {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        return try await body(directory)
    }

    /// The tool's path on PATH, or a failure that says how to install it.
    static func locate(_ tool: String) throws -> URL {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent(tool)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw Failure(
            description:
                "\(tool) is not on PATH; these tests need it to verify signatures independently (`scripts/install-deps --test` installs them; `. scripts/lib/python-env` puts its Python first on PATH)"
        )
    }

    /// Runs a tool in `directory`. Output goes to files rather than pipes so a chatty tool cannot block on a full pipe.
    static func run(_ tool: String, _ arguments: [String], in directory: URL) async throws -> Output {
        let run = try await Subprocess.run(try locate(tool).path, arguments, directory: directory.path)
        return Output(
            status: run.status,
            stdout: run.output,
            stderr: run.errors
        )
    }

    /// Runs openssl and fails unless it exits 0.
    @discardableResult
    static func openssl(_ arguments: [String], in directory: URL) async throws -> String {
        let output = try await run("openssl", arguments, in: directory)
        guard output.status == 0 else {
            throw Failure(description: "openssl \(arguments.joined(separator: " ")) exited \(output.status): \(output.stdout)\(output.stderr)")
        }
        return output.stdout
    }

    /// Runs a Python script and fails unless it exits 0; a missing module is reported as such.
    static func python(_ script: String, _ arguments: [String], in directory: URL) async throws -> String {
        let scriptURL = directory.appendingPathComponent("check-\(UUID().uuidString).py")
        try Data(script.utf8).write(to: scriptURL)
        let output = try await run("python3", [scriptURL.path] + arguments, in: directory)
        if output.stderr.contains("ModuleNotFoundError") {
            throw Failure(
                description:
                    "python3 lacks a module these tests need (scripts/install-deps --test, then . scripts/lib/python-env): \(output.stderr)"
            )
        }
        guard output.status == 0 else {
            throw Failure(description: "python3 check exited \(output.status): \(output.stdout)\(output.stderr)")
        }
        return output.stdout
    }

    /// Writes `contents` to `name` in `directory` and returns its path.
    @discardableResult
    static func write(_ contents: Data, to name: String, in directory: URL) throws -> String {
        let url = directory.appendingPathComponent(name)
        try contents.write(to: url)
        return url.path
    }
}
