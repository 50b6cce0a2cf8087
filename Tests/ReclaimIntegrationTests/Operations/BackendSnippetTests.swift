import Foundation
import Hummingbird
import HummingbirdTesting
import ReclaimService
import ReclaimStore
import ReclaimTestSupport
import Testing

/// docs/backend-integration.md shows a backend how to make user tokens, in Python, in Node.js and with openssl. Each
/// fenced block marked `<language> user-token` is run here as written, by the language's own interpreter, and the
/// token it prints is sent to a running Reclaim that requires user tokens: a snippet that is wrong is refused there.
@Suite("docs/backend-integration.md's user-token snippets make tokens a running Reclaim accepts", .poolWatchdog)
struct BackendSnippetTests {
    let logger = TestPostgres.logger
    /// The corpus subscriber CampaignTestSetup's campaigns give an offer (WINBACK30); the shell snippet names them.
    static let user = "00000000-0000-0000-0000-000000000051"

    /// The blocks of docs/backend-integration.md marked ```` ```<language> <mark> ````, by language (one each).
    static func snippets(marked mark: String = "user-token") throws -> [String: String] {
        let text = try DeployFilesTests.read("docs/backend-integration.md")
        var found: [String: String] = [:]
        for match in text.matches(of: /```([a-z]+) ([a-z-]+)\n([\s\S]*?)```/) where match.output.2 == mark {
            #expect(found[String(match.output.1)] == nil, "two \(match.output.1) \(mark) snippets")
            found[String(match.output.1)] = String(match.output.3)
        }
        return found
    }

    /// Runs `code` as the docs show it, asking for a token for `appAccountToken` with the secret in `secretFile`,
    /// and returns what it printed. Python and Node.js get a call of the snippet's function appended; the shell
    /// snippet names its user and reads `secret` from its folder, as the docs say.
    static func token(language: String, code: String, appAccountToken: String, secretFile: URL, in directory: URL) async throws -> String {
        let run: (status: Int32, output: String, errors: String)
        switch language {
        case "python":
            let script = directory.appendingPathComponent("user_token.py")
            try (code + "\nimport sys\nprint(reclaim_user_token(sys.argv[1], open(sys.argv[2]).read()))\n").write(
                to: script,
                atomically: true,
                encoding: .utf8
            )
            run = try await Subprocess.run("/usr/bin/env", ["python3", script.path, appAccountToken, secretFile.path])
        case "js":
            let script = directory.appendingPathComponent("user-token.js")
            try (code + "\nconsole.log(reclaimUserToken(process.argv[2], require(\"node:fs\").readFileSync(process.argv[3], \"utf8\")));\n").write(
                to: script,
                atomically: true,
                encoding: .utf8
            )
            run = try await Subprocess.run("/usr/bin/env", ["node", script.path, appAccountToken, secretFile.path])
        case "sh":
            #expect(code.contains("token=\(appAccountToken)"), "the shell snippet names the user it makes a token for")
            try FileManager.default.copyItem(at: secretFile, to: directory.appendingPathComponent("secret"))
            defer { try? FileManager.default.removeItem(at: directory.appendingPathComponent("secret")) }
            run = try await Subprocess.run("/bin/bash", ["-euo", "pipefail", "-c", code], directory: directory.path)
        default:
            throw PythonCrossCheck.Failure(description: "no way to run a \(language) snippet")
        }
        guard run.status == 0 else {
            throw PythonCrossCheck.Failure(description: "the \(language) snippet exited \(run.status): \(run.output)\(run.errors)")
        }
        return run.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("the Python, Node.js and shell snippets each make a token GET /v1/offers accepts for its user, and for no other")
    func snippetsRunAgainstTheServer() async throws {
        let snippets = try Self.snippets()
        #expect(Set(snippets.keys) == ["python", "js", "sh"], "\(snippets.keys.sorted())")
        for tool in ["python3", "node", "openssl"] {
            let found = try await Subprocess.run("/bin/sh", ["-c", "command -v \(tool)"]).status == 0
            try #require(found, "\(tool) is not on PATH; this test runs the docs' snippets with it")
        }
        // As `openssl rand -hex 32 > file` writes it: 64 hex digits and a newline, which Reclaim and the snippets drop.
        let secret = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined() + "\n"
        let setup = try CampaignTestSetup(userTokenSecret: secret)
        defer { setup.remove() }
        let secretFile = setup.directory.appendingPathComponent("user-token-secret")
        let work = setup.directory.appendingPathComponent("snippets")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        /// A token the snippet in `language` makes for `user`, checked for its form.
        func token(_ language: String, for user: String) async throws -> String {
            let code = try #require(snippets[language])
            let token = try await Self.token(language: language, code: code, appAccountToken: user, secretFile: secretFile, in: work)
            let parts = token.split(separator: ".")
            let expiry = try #require(parts.first.flatMap { Int($0) }, "\(language): \(token)")
            let now = Int(Date().timeIntervalSince1970)
            #expect(parts.count == 2 && expiry > now && expiry <= now + 86_400, "\(language): \(token)")
            #expect(token.range(of: "^[0-9]+\\.[A-Za-z0-9_-]{43}$", options: .regularExpression) != nil, "\(language): unpadded base64url: \(token)")
            return token
        }
        // (language, appAccountToken asked about, its token, whether Reclaim holds an offer for it)
        var requests: [(language: String, user: String, token: String, hasOffer: Bool)] = []
        for language in snippets.keys.sorted() {
            await requests.append((language, Self.user, try token(language, for: Self.user), true))
        }
        // Given a user in capitals, the function snippets must lowercase it, as Reclaim does (the corpus user's
        // token is all digits): a subscriber Reclaim holds nothing for, asked about in lowercase, gets 200 and [].
        let capitals = "ABCDEF01-2345-4789-ABCD-EF0123456789"
        for language in ["python", "js"] {
            await requests.append((language, capitals.lowercased(), try token(language, for: capitals), false))
        }
        let made = requests
        let stranger = try await token("python", for: UUID().uuidString.lowercased())
        try await withProcessedCorpus(setup) { client, dependencies in
            let appKey = try await TestKeys(client: client).create(scope: .app, bundleId: "GeniusParentingAI", logger: logger)
            let app = Application(router: buildRouter(dependencies), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.live) { http in
                func get(_ user: String, _ token: String) async throws -> (HTTPResponse.Status, String) {
                    try await http.execute(
                        uri: "/v1/offers?appAccountToken=\(user)",
                        method: .get,
                        headers: [.authorization: "Bearer \(appKey)", .init("X-Reclaim-User-Token")!: token]
                    ) { ($0.status, String(buffer: $0.body)) }
                }
                for request in made {
                    let (status, body) = try await get(request.user, request.token)
                    #expect(status == .ok, "\(request.language)'s token for \(request.user): \(body)")
                    let expected = request.hasOffer ? "\"offerIdentifier\":\"WINBACK30\"" : "\"offers\":[]"
                    #expect(body.contains(expected), "\(request.language), \(request.user): \(body)")
                }
                let (status, body) = try await get(Self.user, stranger)
                #expect(status == .unauthorized && body.contains("invalid-user-token"), "another user's token: \(body)")
            }
        }
    }
}
