import ArgumentParser
import Foundation
import ReclaimDomain
import ReclaimService
import ReclaimStore

struct AuditCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract:
            "Read the audit log of privileged actions (who, what, on what, outcome), newest first; --verify checks its hash chain (exit 1 when broken)."
    )
    @Option(help: "Only this action (grant.create), or a family ending in a dot (campaign.).") var action: String?
    @Option(help: "Only actors whose name or key id contains this.") var actor: String?
    @Option(
        help:
            "Only this target: campaign:ID, key:ID, app:BUNDLE_ID, or a subscriber's original transaction id or appAccountToken (looked up by its pseudonym)."
    )
    var target: String?
    @Option(help: "Only entries within this long (30d) or since this time (ISO 8601).") var since: String?
    @Option(help: "Only entries before this time (ISO 8601).") var until: String?
    @Option(help: "At most this many entries.") var limit: Int = 1000
    @Flag(help: "JSON: [{id, at, actorKind, actorKeyId, actor, action, target, outcome, detail, hash}].") var json = false
    @Flag(help: "Check the hash chain from the first entry: whether any was changed or deleted.") var verify = false
    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        let (url, logger) = (try database.resolved(), Bootstrap.logging())
        if verify {
            let result = try await AuditTasks.verify(url: url, logger: logger)
            if let broken = result.firstBroken {
                print("audit log broken at entry \(broken): \(result.reason ?? "")")
                throw ExitCode(1)
            }
            print("audit log intact: \(result.rows) entries, each hash covering the one before")
            return
        }
        guard (1...100_000).contains(limit) else { throw ValidationError("--limit must be from 1 to 100000") }
        let filter = AuditLog.Filter(
            action: action,
            actor: actor,
            target: target,
            since: try since.map { try Self.time($0, option: "--since", durationBack: true) },
            until: try until.map { try Self.time($0, option: "--until", durationBack: false) },
            limit: limit
        )
        print(try await AuditTasks.list(filter, json: json, url: url, logger: logger))
    }

    static func time(_ text: String, option: String, durationBack: Bool) throws -> Date {
        if durationBack, let seconds = DurationText.seconds(text), seconds > 0 { return Date().addingTimeInterval(-Double(seconds)) }
        if let date = try? Date(text, strategy: .iso8601) { return date }
        throw ValidationError("\(option) must be \(durationBack ? "a duration such as 7d or " : "")an ISO 8601 time such as 2026-11-29T08:00:00Z")
    }
}
