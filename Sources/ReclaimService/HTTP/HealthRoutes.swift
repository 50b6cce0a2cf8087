import Hummingbird
import Logging
import PostgresNIO
import ReclaimStore

/// `GET /healthz` (the process is alive: no worker lane or ingest transaction has been stuck past its bound, see
/// ``Liveness``; orchestrators restart the process when it fails) and `GET /readyz` (the database answers and has
/// the schema version this binary expects; load balancers route traffic only to ready instances).
///
/// `/healthz` does not ask the database: a database that is down makes every instance unready, not dead, and
/// restarting them all would not bring it back.
struct HealthRoutes {
    let postgres: Database
    let liveness: Liveness
    let startupGate: StartupGate

    func register(on router: Router<ReclaimRequestContext>) {
        router.get("/healthz") { _, _ -> JSONBody<[String: String]> in
            let stalls = liveness.stalls()
            guard stalls.isEmpty else {
                let what = stalls.prefix(3).map { "\($0.what) without progress for \($0.seconds) s" }.joined(separator: "; ")
                throw Problem(
                    .serviceUnavailable,
                    "stalled",
                    title: "Stalled",
                    detail: "\(what) (bound \(liveness.bound.components.seconds) s): restart this process"
                )
            }
            return JSONBody(["status": "ok"])
        }
        router.get("/readyz") { _, context -> JSONBody<[String: String]> in
            let version: Int?
            do {
                version = try await within(.seconds(2)) {
                    try await Migrator.currentVersion(client: postgres, logger: context.logger)
                }
            } catch {
                throw Problem(.serviceUnavailable, "not-ready", title: "Not ready", detail: "the database is not reachable")
            }
            guard startupGate.isOpen else {
                throw Problem(.serviceUnavailable, "not-ready", title: "Not ready", detail: "the configuration is not yet mirrored into the database")
            }
            guard version == Migrator.targetVersion else {
                let remedy = (version ?? 0) > Migrator.targetVersion ? "run a newer reclaim" : "run reclaim migrate"
                throw Problem(
                    .serviceUnavailable,
                    "not-ready",
                    title: "Not ready",
                    detail:
                        "database schema is at version \(version.map(String.init) ?? "none"), expected \(Migrator.targetVersion): \(remedy)"
                )
            }
            return JSONBody(["status": "ready", "schemaVersion": "\(Migrator.targetVersion)"])
        }
    }
}
