import Foundation
import Logging
import ReclaimStore

/// `process.start` in the audit log: which config (its SHA-256), version and role a `reclaim serve` process runs
/// with, so an auditor can tie a change of behaviour to the config that brought it. Tried a few times: a process
/// may start before its database answers.
enum ProcessStartAudit {
    static func record(role: ServerRole, configSHA256: String?, postgres: Database, logger: Logger, attempts: Int = 5) async {
        let host = ProcessInfo.processInfo.hostName
        let actor = AuditLog.Actor(kind: .process, name: "\(host) pid \(ProcessInfo.processInfo.processIdentifier)")
        let detail = "version \(ReclaimVersion.current), role \(role.rawValue), config sha256 \(configSHA256 ?? "none")"
        for attempt in 1...attempts {
            do {
                try await Audit.record("process.start", outcome: "ok", detail: detail, actor: actor, database: postgres, logger: logger)
                return
            } catch {
                if attempt == attempts {
                    logger.error("the audit log did not take this process's start", metadata: ["error": "\(String(reflecting: error))"])
                } else {
                    try? await Task.sleep(for: .seconds(Double(attempt) * 2))
                }
            }
        }
    }
}
