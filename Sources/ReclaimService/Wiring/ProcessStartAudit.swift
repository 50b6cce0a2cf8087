import Foundation
import Logging
import ReclaimStore

/// `process.start` in the audit log: which config (its SHA-256), version and role a `reclaim serve` process runs
/// with, so an auditor can tie a change of behaviour to the config that brought it. ``ConfigSync`` records it once
/// the database answers, beside mirroring the config; a failure to record is logged and the process serves on.
struct ProcessStartAudit: Sendable {
    let role: ServerRole
    let configSHA256: String?

    func record(postgres: Database, logger: Logger) async {
        let actor = AuditLog.Actor(kind: .process, name: "\(ProcessInfo.processInfo.hostName) pid \(ProcessInfo.processInfo.processIdentifier)")
        let detail = "version \(ReclaimVersion.current), role \(role.rawValue), config sha256 \(configSHA256 ?? "none")"
        do {
            try await Audit.record("process.start", outcome: "ok", detail: detail, actor: actor, database: postgres, logger: logger)
        } catch {
            logger.error("the audit log did not take this process's start", metadata: ["error": "\(String(reflecting: error))"])
        }
    }
}
