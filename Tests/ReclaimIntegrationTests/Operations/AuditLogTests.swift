import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import ReclaimStore
import ReclaimTestSupport
import Testing

@testable import ReclaimService

/// Issue 77: least privilege (admin, support and privacy keys) and the audit log of privileged actions.
@Suite("Roles and the audit log", .poolWatchdog)
struct AuditLogTests {
    let logger = TestPostgres.logger
    static let subscriber = "2000000970472825"

    static func rows(_ client: Database) async throws -> [AuditLog.Row] {
        try await client.withConnection(logger: TestPostgres.logger) {
            try await AuditLog.list(AuditLog.Filter(), connection: $0, logger: TestPostgres.logger)
        }
    }

    /// Every text the audit log holds, for checking that no identifier is in it.
    static func everything(_ client: Database) async throws -> String {
        var texts: [String] = []
        for try await row in try await client.query("SELECT row_to_json(a)::text FROM reclaim.audit_log a", logger: TestPostgres.logger) {
            texts.append(try row.decode(String.self))
        }
        return texts.joined(separator: "\n")
    }

    @Test(
        "a support key reads a subscriber in the console and is refused a grant (403) and the audit log; an app's key reads only its app; every read and refusal is audited, pseudonymised"
    )
    func roles() async throws {
        let setup = try CampaignTestSetup(extraApps: "  - {bundleId: com.example.other, environments: [Sandbox]}")
        defer { setup.remove() }
        try await withProcessedCorpus(setup) { client, dependencies in
            let keys = TestKeys(client: client)
            let admin = try await keys.create(scope: .admin, bundleId: nil, name: "ops-alice", logger: logger)
            let support = try await keys.create(scope: .support, bundleId: nil, name: "support-anna", logger: logger)
            let otherSupport = try await keys.create(scope: .support, bundleId: "com.example.other", name: "support-other", logger: logger)
            let privacy = try await keys.create(scope: .privacy, bundleId: nil, name: "dpo", logger: logger)
            let console = try await keys.create(scope: .console, bundleId: nil, name: "wall", logger: logger)
            let app = Application(router: buildRouter(dependencies), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.live) { http in
                func session(_ key: String) async throws -> String {
                    let body = "key=" + (key.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? key)
                    let headers: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
                    let cookie = try await http.execute(uri: "/console/session", method: .post, headers: headers, body: ByteBuffer(string: body)) {
                        #expect($0.status == .seeOther)
                        return $0.head.headerFields[.setCookie]
                    }
                    return String(try #require(cookie?.split(separator: ";").first))
                }
                func get(_ uri: String, _ cookie: String) async throws -> (HTTPResponse, String) {
                    try await http.execute(uri: uri, method: .get, headers: [.cookie: cookie]) { ($0.head, String(buffer: $0.body)) }
                }

                // Support: the reports and the story.
                let supportSession = try await session(support)
                let dashboard = try await get("/console", supportSession)
                #expect(dashboard.0.status == .ok && dashboard.1.contains(#"action="/console/subscriber""#), "support sees the search form")
                #expect(!dashboard.1.contains(#"href="/console/audit""#))
                let story = try await get("/console/subscriber?id=\(Self.subscriber)", supportSession)
                #expect(story.0.status == .ok && story.1.contains("data-table"), "\(story.0.status)")
                #expect(try await get("/console/audit", supportSession).0.status == .forbidden)
                // …and no grant: 403 problem+json, where an app key stays 401.
                let grant = try await GrantTests.grant(GrantTests.referral, key: support, idempotencyKey: "s-1", http: http)
                #expect(grant.0 == .forbidden, "\(grant)")
                #expect(grant.1["type"] as? String == "urn:reclaim:problem:forbidden")
                #expect((grant.1["detail"] as? String)?.contains("a support key may not use POST /v1/grants") == true, "\(grant.1)")
                #expect(try await GrantTests.grant(GrantTests.referral, key: privacy, idempotencyKey: "p-1", http: http).0 == .forbidden)

                // A support key of another app: this app's subscriber is not its to read.
                let otherSession = try await session(otherSupport)
                #expect(try await get("/console/subscriber?id=\(Self.subscriber)&app=GeniusParentingAI", otherSession).0.status == .forbidden)
                let limited = try await get("/console/subscriber?id=\(Self.subscriber)", otherSession)
                #expect(limited.0.status == .ok && !limited.1.contains("data-table") && limited.1.contains("No subscription found"))

                // Privacy: no reports, straight to the story.
                let privacySession = try await session(privacy)
                let redirected = try await get("/console", privacySession)
                #expect(redirected.0.status == .seeOther && redirected.0.headerFields[.location] == "/console/subscriber")
                #expect(try await get("/console/subscriber?id=\(Self.subscriber)", privacySession).0.status == .ok)

                // A console key sees counts, not people.
                #expect(try await get("/console/subscriber?id=\(Self.subscriber)", try await session(console)).0.status == .forbidden)

                // The admin reads the audit log in the console, and finds the subscriber by their id.
                let adminSession = try await session(admin)
                let audit = try await get("/console/audit?target=\(Self.subscriber)", adminSession)
                #expect(audit.0.status == .ok && audit.1.contains("subscriber.read") && audit.1.contains("support:support-anna"), "\(audit.1)")
                #expect(!audit.1.contains(Self.subscriber), "the page echoes no subscriber id")
            }

            let rows = try await Self.rows(client)
            func entries(_ action: String, _ outcome: String, actor: String) -> [AuditLog.Row] {
                rows.filter { $0.action == action && $0.outcome == outcome && $0.actor == actor }
            }
            #expect(entries("console.sign-in", "ok", actor: "support:support-anna").count == 1)
            let read = try #require(entries("subscriber.read", "ok", actor: "support:support-anna").first)
            #expect(read.target?.hasPrefix("subscriber:") == true && read.target?.count == "subscriber:".count + 32, "\(read)")
            #expect(read.actorKeyId != nil && read.actorKind == .key)
            #expect(entries("access.refused", "refused", actor: "support:support-anna").first?.target == "route:POST /v1/grants")
            #expect(entries("access.refused", "refused", actor: "privacy:dpo").count == 1)
            #expect(entries("audit.read", "refused", actor: "support:support-anna").count == 1)
            #expect(entries("subscriber.read", "refused", actor: "support:support-other").count == 1)
            #expect(entries("subscriber.read", "refused", actor: "console:wall").count == 1)
            #expect(entries("subscriber.read", "ok", actor: "privacy:dpo").first?.target == read.target, "one subscriber, one pseudonym")
            // The log holds no subscriber's identifier, in any column.
            #expect(try await !Self.everything(client).contains(Self.subscriber))
            let verified = try await client.withConnection(logger: logger) { try await AuditLog.verify(connection: $0, logger: self.logger) }
            #expect(verified.firstBroken == nil && verified.rows == rows.count, "\(verified)")
        }
    }

    @Test(
        "each command line's privileged action is audited with --actor, RECLAIM_ACTOR or the OS user; reclaim audit filters and prints JSON; --verify finds an edited and a deleted entry"
    )
    func commandLine() async throws {
        let setup = try CampaignTestSetup()
        defer { setup.remove() }
        let corpus = try CorpusCampaignTests.corpusInSignedDateOrder()
        try await withTestDatabase { client, url in
            let dependencies = try Dependencies.test(postgres: client, config: setup.config)
            try await processNotifications(corpus.map(\.notification.body), client: client, dependencies: dependencies)
            try await client.transaction(logger: logger) {
                try await CampaignStore.sync(try setup.config.domainCampaigns(), connection: $0, logger: self.logger)
            }
            let reclaim = try Binaries.path("reclaim")
            var environment = ProcessInfo.processInfo.environment
            environment["DATABASE_URL"] = url.connectionString
            environment["RECLAIM_ACTOR"] = nil
            func run(_ arguments: [String], actor: String? = nil) async throws -> (status: Int32, output: String, errors: String) {
                var environment = environment
                environment["RECLAIM_ACTOR"] = actor
                return try await Subprocess.run(reclaim, arguments, environment: environment)
            }
            let created = try await run(["admin", "create-key", "--role", "support", "--name", "support-anna", "--actor", "alice"])
            #expect(created.status == 0, "\(created.errors)")
            #expect(
                try await run(["admin", "create-key", "--role", "admin", "--bundle-id", "GeniusParentingAI"]).status != 0,
                "an admin key is of every app"
            )
            let paused = try await run(["campaigns", "pause", "winback-expired", "--reason", "wrong price"], actor: "bob")
            #expect(paused.status == 0, "\(paused.errors)")
            #expect(try await run(["campaigns", "resume", "winback-expired"]).status == 0)
            #expect(try await run(["campaigns", "pause", "no-such-campaign", "--actor", "bob"]).status != 0)
            let forgot = try await run(["subscribers", "forget", "--original-transaction-id", Self.subscriber, "--actor", "carol"])
            #expect(forgot.status == 0, "\(forgot.errors)")
            let keys = try await run(["admin", "list-keys"])
            let supportId = try #require(keys.output.split(separator: "\n").first { $0.contains("support-anna") }?.split(separator: "\t").first)
            #expect(keys.output.contains("\tsupport\tevery app\t"), "\(keys.output)")
            #expect(try await run(["apps", "revoke-key", String(supportId), "--actor", "alice"]).status == 0)
            // One stop for a whole app (issue 78): said, listed, idempotent, resumed; each audited.
            let stopped = try await run(["stop", "--app", "GeniusParentingAI", "--reason", "INC-142", "--actor", "dave"])
            #expect(
                stopped.status == 0 && stopped.output.hasPrefix("stopped GeniusParentingAI: within a second"),
                "\(stopped.output)\(stopped.errors)"
            )
            #expect(
                try await run(["stop", "--app", "GeniusParentingAI", "--reason", "again", "--actor", "dave"]).output.contains(
                    "was already stopped since"
                )
            )
            #expect(try await run(["stop"]).output.contains("GeniusParentingAI\tstopped since"))
            #expect(try await run(["stop", "--app", "GeniusParentingAI"]).status != 0, "a stop says why")
            #expect(
                try await run(["stop", "--app", "GeniusParentingAI", "--resume", "--actor", "dave"]).output.hasPrefix("resumed GeniusParentingAI")
            )
            #expect(try await run(["stop"]).output == "no app is stopped\n")

            // reclaim audit --json: each action with its actor.
            let listed = try await run(["audit", "--json"])
            #expect(listed.status == 0, "\(listed.errors)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(listed.output.utf8)) as? [[String: Any]])
            func entry(_ action: String, outcome: String = "ok") -> [String: Any]? {
                json.first { $0["action"] as? String == action && $0["outcome"] as? String == outcome }
            }
            #expect(entry("key.create")?["actor"] as? String == "alice")
            #expect((entry("key.create")?["detail"] as? String)?.contains("support key \"support-anna\" for every app") == true)
            #expect(
                entry("campaign.pause")?["actor"] as? String == "bob" && entry("campaign.pause")?["target"] as? String == "campaign:winback-expired"
            )
            #expect(entry("campaign.pause")?["detail"] as? String == "wrong price")
            #expect(entry("campaign.pause", outcome: "failed")?["target"] as? String == "campaign:no-such-campaign")
            let uid = getuid()
            #expect((entry("campaign.resume")?["actor"] as? String)?.hasPrefix("os:") == true)
            #expect((entry("campaign.resume")?["actor"] as? String)?.hasSuffix("(uid \(uid))") == true)
            #expect(entry("subscriber.forget")?["actor"] as? String == "carol")
            #expect(entry("key.revoke")?["target"] as? String == "key:\(supportId)")
            #expect(entry("app.stop")?["actor"] as? String == "dave" && entry("app.stop")?["detail"] as? String == "INC-142")
            #expect(entry("app.stop", outcome: "unchanged")?["target"] as? String == "app:GeniusParentingAI")
            #expect(entry("app.resume")?["actor"] as? String == "dave")
            #expect(try await !Self.everything(client).contains(Self.subscriber), "forget's target is the pseudonym")

            // Filters: by target (the identifier, looked up by its pseudonym), action family and actor.
            let forgotten = try await run(["audit", "--target", Self.subscriber])
            #expect(forgotten.output.contains("subscriber.forget") && forgotten.output.split(separator: "\n").count == 1, "\(forgotten.output)")
            let campaigns = try await run(["audit", "--action", "campaign.", "--json"])
            #expect((try JSONSerialization.jsonObject(with: Data(campaigns.output.utf8)) as? [Any])?.count == 3)
            #expect(try await run(["audit", "--actor", "alice"]).output.split(separator: "\n").count == 2)

            // Intact, then one entry edited, then one deleted: --verify names where the chain breaks.
            let intact = try await run(["audit", "--verify"])
            #expect(intact.status == 0 && intact.output.hasPrefix("audit log intact: \(json.count) entries"), "\(intact.output)")
            let pauseId = try #require(entry("campaign.pause")?["id"] as? Int)
            try await client.query("UPDATE reclaim.audit_log SET actor = 'mallory' WHERE id = \(pauseId)", logger: logger)
            let edited = try await run(["audit", "--verify"])
            #expect(edited.status == 1 && edited.output.hasPrefix("audit log broken at entry \(pauseId): its fields"), "\(edited.output)")
            try await client.query("UPDATE reclaim.audit_log SET actor = 'bob' WHERE id = \(pauseId)", logger: logger)
            #expect(try await run(["audit", "--verify"]).status == 0)
            try await client.query("DELETE FROM reclaim.audit_log WHERE id = \(pauseId)", logger: logger)
            let deleted = try await run(["audit", "--verify"])
            #expect(deleted.status == 1 && deleted.output.contains("does not follow row"), "\(deleted.output)")
        }
    }

    @Test("a process's start is audited with its config's SHA-256; appends from many tasks make one chain")
    func processStartAndConcurrency() async throws {
        try await withTestDatabase { client, _ in
            await ProcessStartAudit(role: .all, configSHA256: "ab" + String(repeating: "0", count: 62)).record(postgres: client, logger: logger)
            let start = try #require(try await Self.rows(client).first)
            #expect(start.action == "process.start" && start.actorKind == .process)
            #expect(start.detail?.contains("config sha256 ab000") == true && start.detail?.contains("role all") == true, "\(start)")
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<40 {
                    group.addTask {
                        try await Audit.record(
                            "campaign.pause",
                            target: .text("campaign:c\(index)"),
                            actor: AuditLog.Actor(kind: .command, name: "t\(index)"),
                            database: client,
                            logger: TestPostgres.logger
                        )
                    }
                }
                try await group.waitForAll()
            }
            let verified = try await client.withConnection(logger: logger) { try await AuditLog.verify(connection: $0, logger: self.logger) }
            #expect(verified.rows == 41 && verified.firstBroken == nil, "\(verified)")
        }
    }

    @Test("the row hash covers every field and where one ends: moving text from one field to the next changes it")
    func rowHash() {
        let actor = AuditLog.Actor(kind: .command, name: "alice")
        let at = Date(timeIntervalSince1970: 1_800_000_000)
        let a = AuditLog.Entry(at: at, actor: actor, action: "campaign.pause", target: "campaign:x", detail: "y")
        let b = AuditLog.Entry(at: at, actor: actor, action: "campaign.pause", target: "campaign:", detail: "xy")
        let c = AuditLog.Entry(at: at, actor: actor, action: "campaign.pause", target: "campaign:x", detail: nil)
        let d = AuditLog.Entry(at: at, actor: actor, action: "campaign.pause", target: "campaign:x", detail: "")
        let hashes = [a, b, c, d].map { AuditLog.rowHash(previous: AuditLog.genesis, entry: $0) }
        #expect(Set(hashes.map { $0.map { String(format: "%02x", $0) }.joined() }).count == 4)
        #expect(AuditLog.rowHash(previous: AuditLog.genesis, entry: a) == AuditLog.rowHash(previous: AuditLog.genesis, entry: a))
        #expect(AuditLog.rowHash(previous: [UInt8](repeating: 1, count: 32), entry: a) != hashes[0])
    }
}
