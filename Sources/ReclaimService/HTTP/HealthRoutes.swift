import Hummingbird
import Logging
import PostgresNIO
import ReclaimStore

/// `GET /healthz` (the process is up) and `GET /readyz` (the database answers and has the schema
/// version this binary expects). Load balancers route traffic only to ready instances.
struct HealthRoutes {
    let postgres: PostgresClient

    func register(on router: Router<ReclaimRequestContext>) {
        router.get("/healthz") { _, _ in
            ["status": "ok"]
        }
        router.get("/readyz") { _, context -> JSONBody<[String: String]> in
            let version: Int?
            do {
                version = try await withTimeout(.seconds(2)) {
                    try await Migrator.currentVersion(client: postgres, logger: context.logger)
                }
            } catch {
                throw Problem(.serviceUnavailable, "not-ready", title: "Not ready", detail: "the database is not reachable")
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
