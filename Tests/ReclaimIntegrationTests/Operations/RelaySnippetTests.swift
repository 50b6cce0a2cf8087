import Foundation
import PostgresNIO
import ReclaimStore
import ReclaimTestSupport
import Testing

/// Issue 52: docs/backend-integration.md leads with relaying Apple's raw bodies from a team's own receiver. Each
/// fenced block marked `<language> relay` is run here as written, by the language's own interpreter, against a
/// `reclaim serve` process: started only after the relay began (its retry is what delivers the notification), and
/// then given a forged body, which it must refuse without retrying.
@Suite("docs/backend-integration.md's relay snippets deliver Apple's bodies to a running Reclaim", .poolWatchdog)
struct RelaySnippetTests {
    static let keyId = "RELAYKEY01"

    /// The snippet in `language` with a call appended that relays the file `body` to `url` and prints the result.
    static func script(language: String, code: String, in directory: URL) throws -> [String] {
        switch language {
        case "python":
            let script = directory.appendingPathComponent("relay.py")
            try (code + "\nimport sys\nprint(relay_to_reclaim(open(sys.argv[1], 'rb').read(), sys.argv[2]))\n").write(
                to: script,
                atomically: true,
                encoding: .utf8
            )
            return ["python3", script.path]
        case "js":
            let script = directory.appendingPathComponent("relay.js")
            try (code + "\nrelayToReclaim(require(\"node:fs\").readFileSync(process.argv[2]), process.argv[3]).then((ok) => console.log(ok));\n")
                .write(to: script, atomically: true, encoding: .utf8)
            return ["node", script.path]
        default:
            throw PythonCrossCheck.Failure(description: "no way to run a \(language) snippet")
        }
    }

    @Test("the Python and Node.js relays retry until Reclaim is up, deliver the body once, and give up on a forged one")
    func relaysRunAgainstTheServer() async throws {
        let snippets = try BackendSnippetTests.snippets(marked: "relay")
        #expect(Set(snippets.keys) == ["python", "js"], "\(snippets.keys.sorted())")
        let (directory, ca) = try serverTestFiles(prefix: "relay", keyId: Self.keyId)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try writeRetainConfig(in: directory, keyId: Self.keyId, settings: "")
        let notifications = TestNotifications(ca: ca)
        let forger = TestNotifications(ca: try TestCertificateAuthority())
        try await withTestDatabase { database, url in
            let server = try ServerProcess(
                role: "api",
                config: config,
                databaseURL: url.connectionString,
                log: directory.appendingPathComponent("api.log")
            )
            defer { server.stopInBackground() }
            let endpoint = "http://127.0.0.1:\(server.port)/v1/apple/notifications"
            for language in ["python", "js"] {
                let command = try Self.script(language: language, code: try #require(snippets[language]), in: directory)
                let uuid = UUID()
                let bodyFile = directory.appendingPathComponent("\(language)-body.json")
                try notifications.body(uuid: uuid).write(to: bodyFile)

                // Reclaim is down when the relay starts: its first attempt finds nothing listening.
                async let relayed = Subprocess.run("/usr/bin/env", command + [bodyFile.path, endpoint])
                try await Task.sleep(for: .milliseconds(1500))
                try server.start()
                try await server.waitUntilUp()
                let run = try await relayed
                #expect(
                    run.status == 0 && run.output.trimmingCharacters(in: .whitespacesAndNewlines).lowercased() == "true",
                    "\(language): \(run.output)\(run.errors)\n\(server.logTail())"
                )
                let rows = try await database.query(
                    "SELECT count(*)::bigint FROM reclaim.notifications WHERE notification_uuid = \(uuid)",
                    logger: TestPostgres.logger
                )
                for try await stored in rows.decode(Int64.self) { #expect(stored == 1, "\(language): the relayed notification is stored once") }

                // A forged body is refused (401) and not retried: the relay returns false at once, naming the problem.
                let forgedFile = directory.appendingPathComponent("\(language)-forged.json")
                try forger.body().write(to: forgedFile)
                let forged = try await Subprocess.run("/usr/bin/env", command + [forgedFile.path, endpoint])
                let lines = forged.output.split(separator: "\n").map { $0.lowercased() }
                #expect(lines.last == "false", "\(language): \(forged.output)\(forged.errors)")
                #expect(forged.output.contains("401 urn:reclaim:problem:"), "\(language): \(forged.output)")
                await server.stop()
            }
        }
    }
}
