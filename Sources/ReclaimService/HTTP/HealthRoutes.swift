import Foundation
import Hummingbird
import Logging
import PostgresNIO
import ReclaimStore

/// `GET /healthz` (the process is alive: no worker lane or ingest transaction has been stuck past its bound, see
/// ``Liveness``; orchestrators restart the process when it fails) and `GET /readyz` (the database answers and has
/// the schema version this binary expects, or a newer one reached by additive steps only, ``Migrator/Compatibility``;
/// load balancers route traffic only to ready instances).
///
/// `/healthz` does not ask the database: a database that is down makes every instance unready, not dead, and
/// restarting them all would not bring it back.
struct HealthRoutes {
    let postgres: Database
    let liveness: Liveness
    let startupGate: StartupGate
    /// The apps stopped (`reclaim stop`): named on a ready answer, which they do not change.
    let stops: AppStops

    func register(on router: Router<ReclaimRequestContext>) {
        router.get("/healthz") { _, _ -> JSONBody<[String: String]> in
            let stalls = liveness.stalls()
            guard stalls.isEmpty else {
                let what = stalls.prefix(3).map { "\($0.what) without progress for \($0.seconds) s" }.joined(separator: "; ")
                throw Problem(.stalled, "\(what) (bound \(liveness.bound.components.seconds) s): restart this process")
            }
            return JSONBody(["status": "ok"])
        }
        router.get("/readyz") { _, context -> JSONBody<[String: String]> in
            let compatibility: Migrator.Compatibility
            do {
                compatibility = try await within(.seconds(2)) {
                    try await Migrator.compatibility(client: postgres, logger: context.logger)
                }
            } catch {
                // Within 2 s (a probe's budget): a timeout here is a database too busy or unreachable; the log says which.
                context.logger.warning("readyz: the schema version could not be read", metadata: ["error": "\(String(reflecting: error))"])
                throw Problem(.notReady, "the database is not reachable")
            }
            guard startupGate.isOpen else {
                throw Problem(.notReady, "the configuration is not yet mirrored into the database")
            }
            let target = Migrator.targetVersion
            // A stopped app is a decision of the operators, not a fault: the process stays ready and says so.
            let stopped = await stops.current(logger: context.logger).values.sorted { $0.bundleId < $1.bundleId }
                .map { "\($0.bundleId) since \($0.stoppedAt.formatted(.iso8601)) by \($0.stoppedBy): \($0.reason)" }
            func ready(_ fields: [String: String]) -> JSONBody<[String: String]> {
                JSONBody(stopped.isEmpty ? fields : fields.merging(["stopped": stopped.joined(separator: "; ")]) { first, _ in first })
            }
            switch compatibility {
            case .current:
                return ready(["status": "ready", "schemaVersion": "\(target)", "schema": "current"])
            case .aheadAdditive(let database):
                // A rollout under way (migrate ran, this pod's replacement is coming) or a rollback: the steps since
                // this binary's version only added, so its queries still fit. It keeps serving.
                return ready(["status": "ready", "schemaVersion": "\(target)", "databaseSchemaVersion": "\(database)", "schema": "ahead-additive"])
            case .ahead(let database):
                throw Problem(
                    .notReady,
                    "database schema is at version \(database), expected \(target), by a step that is not additive: run a newer reclaim"
                )
            case .behind(let database):
                throw Problem(
                    .notReady,
                    "database schema is at version \(database.map(String.init) ?? "none"), expected \(target): run reclaim migrate"
                )
            }
        }
    }
}
