import Foundation
import ReclaimTestSupport
import Testing

/// One commit builds one binary (docs/releasing.md, "Rebuilding a release"): Package.resolved is committed and every
/// build resolves from it through scripts/resolve, which refuses a manifest the pins do not satisfy; the base images
/// are pinned by digest and scripts/base-digests refreshes the pins.
@Suite("Reproducible builds: the committed lock, scripts/resolve and the base-image pins", .poolWatchdog)
struct ReproducibleBuildTests {
    static let root = Binaries.repositoryRoot

    /// A package of its own with one dependency from the same package host as the server's, and scripts/resolve.
    static func package(requirement: String) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("resolve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("Sources/p"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("scripts"), withIntermediateDirectories: true)
        try """
        // swift-tools-version: 6.1
        import PackageDescription
        let package = Package(
            name: "p",
            dependencies: [.package(url: "https://github.com/apple/swift-argument-parser.git", \(requirement))],
            targets: [.executableTarget(name: "p", dependencies: [.product(name: "ArgumentParser", package: "swift-argument-parser")])]
        )
        """.write(to: folder.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
        try "print(1)\n".write(to: folder.appendingPathComponent("Sources/p/main.swift"), atomically: true, encoding: .utf8)
        try FileManager.default.copyItem(at: root.appendingPathComponent("scripts/resolve"), to: folder.appendingPathComponent("scripts/resolve"))
        return folder
    }

    /// The repository's own pin of swift-argument-parser: its version and revision.
    static func pinned(_ identity: String) throws -> (version: String, revision: String) {
        let resolved = try JSONSerialization.jsonObject(with: Data(contentsOf: root.appendingPathComponent("Package.resolved"))) as? [String: Any]
        let pins = try #require(resolved?["pins"] as? [[String: Any]])
        let pin = try #require(pins.first { $0["identity"] as? String == identity })
        let state = try #require(pin["state"] as? [String: String])
        return (try #require(state["version"]), try #require(state["revision"]))
    }

    static func resolvedFile(version: String, revision: String) -> String {
        """
        {
          "originHash" : "0000000000000000000000000000000000000000000000000000000000000000",
          "pins" : [
            {
              "identity" : "swift-argument-parser",
              "kind" : "remoteSourceControl",
              "location" : "https://github.com/apple/swift-argument-parser.git",
              "state" : {
                "revision" : "\(revision)",
                "version" : "\(version)"
              }
            }
          ],
          "version" : 3
        }

        """
    }

    static func resolve(_ folder: URL, _ arguments: [String] = []) async throws -> (status: Int32, output: String, errors: String) {
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = "/opt/swift/usr/bin:" + (environment["PATH"] ?? "/usr/bin:/bin")
        return try await Subprocess.run(folder.appendingPathComponent("scripts/resolve").path, arguments, environment: environment)
    }

    @Test("Package.resolved is committed, pins every package by a released version, and is what the build resolved")
    func committed() async throws {
        let tracked = try await runProcess("/usr/bin/env", ["git", "-C", Self.root.path, "ls-files", "--error-unmatch", "Package.resolved"])
        #expect(tracked.status == 0, "Package.resolved is not tracked by git: \(tracked.errors)")
        let ignored = try DeployFilesTests.read(".gitignore")
        #expect(!ignored.split(separator: "\n").contains("Package.resolved"), ".gitignore still ignores Package.resolved")
        let resolved =
            try JSONSerialization.jsonObject(with: Data(contentsOf: Self.root.appendingPathComponent("Package.resolved"))) as? [String: Any]
        let pins = try #require(resolved?["pins"] as? [[String: Any]])
        #expect(pins.count > 10)
        for pin in pins {
            let state = pin["state"] as? [String: String] ?? [:]
            #expect(state["version"]?.firstMatch(of: /^\d+\.\d+\.\d+$/) != nil, "\(pin["identity"] ?? "?") is not pinned by a version")
            #expect(state["revision"]?.count == 40, "\(pin["identity"] ?? "?") has no revision")
        }
        // Every build of the server goes through the lock: CI (scripts/test), the image and the other build scripts.
        #expect(try DeployFilesTests.read("scripts/test").contains("scripts/resolve --strict"))
        #expect(try DeployFilesTests.read("deploy/Containerfile").contains("scripts/resolve"))
        #expect(try DeployFilesTests.read("scripts/build-image").contains("scripts/resolve"))
        for script in ["scripts/test", "scripts/bench", "scripts/fuzz", "scripts/ha-check"] {
            for line in try DeployFilesTests.read(script).split(separator: "\n")
            where line.contains("swift build") && !line.contains("--show-bin-path") {
                #expect(line.contains("--force-resolved-versions"), "\(script) builds without the lock: \(line)")
            }
        }
    }

    @Test("scripts/resolve takes the pinned version, and refuses a manifest the pins do not satisfy")
    func refusesDisagreement() async throws {
        let (version, revision) = try Self.pinned("swift-argument-parser")
        let agreeing = try Self.package(requirement: "from: \"1.5.0\"")
        defer { try? FileManager.default.removeItem(at: agreeing) }
        try Self.resolvedFile(version: version, revision: revision).write(
            to: agreeing.appendingPathComponent("Package.resolved"),
            atomically: true,
            encoding: .utf8
        )
        let ok = try await Self.resolve(agreeing, ["--strict"])
        #expect(ok.status == 0, "\(ok.output)\(ok.errors)")
        #expect(ok.errors.contains("1 packages at the versions in Package.resolved"), "\(ok.errors)")

        // The manifest now asks for a range the pinned version is outside of: refused, nothing re-resolved.
        let disagreeing = try Self.package(requirement: "\"\(version.split(separator: ".")[0]).99.0\"..<\"99.0.0\"")
        defer { try? FileManager.default.removeItem(at: disagreeing) }
        let file = Self.resolvedFile(version: version, revision: revision)
        try file.write(to: disagreeing.appendingPathComponent("Package.resolved"), atomically: true, encoding: .utf8)
        let refused = try await Self.resolve(disagreeing)
        #expect(refused.status != 0)
        #expect((refused.output + refused.errors).contains("out-of-date resolved file"), "\(refused.output)\(refused.errors)")
        #expect(try String(contentsOf: disagreeing.appendingPathComponent("Package.resolved"), encoding: .utf8) == file)

        // A pin by branch is no lock.
        let branch = try Self.package(requirement: "from: \"1.5.0\"")
        defer { try? FileManager.default.removeItem(at: branch) }
        try Self.resolvedFile(version: version, revision: revision)
            .replacingOccurrences(of: "\"version\" : \"\(version)\"", with: "\"branch\" : \"main\"")
            .write(to: branch.appendingPathComponent("Package.resolved"), atomically: true, encoding: .utf8)
        let byBranch = try await Self.resolve(branch)
        #expect(byBranch.status != 0)
        #expect(byBranch.errors.contains("pinned by branch:main alone"), "\(byBranch.errors)")
    }

    @Test("a revision the host's tag does not name: --strict refuses it; otherwise the host's is taken for the same version, and said")
    func hostRevisions() async throws {
        let (version, revision) = try Self.pinned("swift-argument-parser")
        let other = String(repeating: "0", count: 40)
        let folder = try Self.package(requirement: "from: \"1.5.0\"")
        defer { try? FileManager.default.removeItem(at: folder) }
        let lock = folder.appendingPathComponent("Package.resolved")
        try Self.resolvedFile(version: version, revision: other).write(to: lock, atomically: true, encoding: .utf8)
        let strict = try await Self.resolve(folder, ["--strict"])
        #expect(strict.status != 0)
        #expect(strict.errors.contains("Package.resolved records \(other), the host's tag names \(revision) (--strict refuses)"), "\(strict.errors)")

        let lenient = try await Self.resolve(folder)
        #expect(lenient.status == 0, "\(lenient.output)\(lenient.errors)")
        #expect(lenient.errors.contains("this host's tag names \(revision): using the host's"), "\(lenient.errors)")
        let rewritten = try String(contentsOf: lock, encoding: .utf8)
        #expect(rewritten.contains("\"revision\" : \"\(revision)\"") && rewritten.contains("\"version\" : \"\(version)\""))
    }

    @Test("reclaim --version names the SHA-256 of the Package.resolved it was built from (its first 12 hex digits)")
    func versionNamesTheLock() async throws {
        let run = try await runProcess("/usr/bin/env", ["sha256sum", Self.root.appendingPathComponent("Package.resolved").path])
        let digest = String(run.output.prefix(12))
        #expect(digest.count == 12)
        let printed = try await runProcess(try Binaries.path("reclaim"), ["--version"]).output
        #expect(printed.trimmingCharacters(in: .whitespacesAndNewlines).hasSuffix(", Package.resolved \(digest))"), "\(printed)")
    }

    @Test("every base image is pinned by digest; scripts/base-digests asks the registry by tag, rewrites the pins and says what changed")
    func baseDigests() async throws {
        let containerfile = try DeployFilesTests.read("deploy/Containerfile")
        let froms = containerfile.split(separator: "\n").filter { $0.hasPrefix("FROM ") }
        #expect(froms.count == 2)
        for from in froms {
            #expect(from.firstMatch(of: /^FROM [a-z0-9.\/_-]+:[A-Za-z0-9._-]+@sha256:[0-9a-f]{64}( AS \w+)?$/) != nil, "\(from)")
        }

        // A registry that wants a token, as Docker Hub does: HEAD the manifest, 401 naming the realm, the token, HEAD again.
        let stub = FileManager.default.temporaryDirectory.appendingPathComponent("registry-\(UUID().uuidString).py")
        try #"""
        import http.server, os, sys, threading
        # Gone when the test is: it ends at the end of its standard input (a signal may be blocked in the test's children).
        threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
        class H(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a): pass
            def do_HEAD(self):
                if not self.path.startswith("/v2/library/"):
                    self.send_response(404); self.end_headers(); return
                if self.headers.get("Authorization") != "Bearer t0ken":
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", 'Bearer realm="http://127.0.0.1:%d/token",service="stub"' % self.server.server_port)
                    self.end_headers(); return
                self.send_response(200)
                self.send_header("Docker-Content-Digest", "sha256:" + ("a" if "/swift/" in self.path else "b") * 64)
                self.end_headers()
            def do_GET(self):
                body = b'{"token": "t0ken"}' if self.path.startswith("/token?service=stub&scope=repository:library/") else b"{}"
                self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
        server = http.server.HTTPServer(("127.0.0.1", 0), H)
        print(server.server_port, flush=True)
        server.serve_forever()
        """#.write(to: stub, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: stub) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", stub.path]
        let pipe = Pipe()
        let input = Pipe()
        process.standardOutput = pipe
        process.standardInput = input
        try process.run()
        defer {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
        }
        let portLine = String(decoding: pipe.fileHandleForReading.availableData, as: UTF8.self)
        let port = try #require(Int(portLine.trimmingCharacters(in: .whitespacesAndNewlines)))

        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("Containerfile-\(UUID().uuidString)")
        try containerfile.write(to: copy, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: copy) }
        let script = Self.root.appendingPathComponent("scripts/base-digests").path
        var environment = ProcessInfo.processInfo.environment
        environment["CONTAINERFILE"] = copy.path
        environment["REGISTRY"] = "http://127.0.0.1:\(port)"
        let check = try await Subprocess.run(script, ["--check"], environment: environment)
        #expect(check.status == 1)
        #expect(try String(contentsOf: copy, encoding: .utf8) == containerfile, "--check rewrote the file")
        let refresh = try await Subprocess.run(script, [], environment: environment)
        #expect(refresh.status == 0, "\(refresh.errors)")
        let old = try #require(containerfile.firstMatch(of: /FROM swift:6.3-bookworm@(sha256:[0-9a-f]{64})/)?.output.1)
        #expect(
            refresh.output.contains(
                "swift:6.3-bookworm: \(old) -> sha256:\(String(repeating: "a", count: 64)) (from the registry at http://127.0.0.1:\(port))"
            ),
            "\(refresh.output)"
        )
        let rewritten = try String(contentsOf: copy, encoding: .utf8)
        #expect(rewritten.contains("FROM swift:6.3-bookworm@sha256:\(String(repeating: "a", count: 64)) AS build"))
        #expect(rewritten.contains("FROM debian:bookworm-slim@sha256:\(String(repeating: "b", count: 64))\n"))
        let again = try await Subprocess.run(script, ["--check"], environment: environment)
        #expect(again.status == 0 && again.output.contains("unchanged"), "\(again.output)")

        // No registry and no pulled image: the pins are kept, and said.
        environment["REGISTRY"] = "http://127.0.0.1:1"
        let offline = try await Subprocess.run(script, ["--check"], environment: environment)
        #expect(offline.status == 0)
        #expect(offline.output.contains("debian:bookworm-slim: kept sha256:"), "\(offline.output)")
    }
}
