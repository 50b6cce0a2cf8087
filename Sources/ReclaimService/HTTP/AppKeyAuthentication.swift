import Hummingbird
import Logging
import ReclaimStore

/// Reads `Authorization: Bearer <key>` and returns the app the key belongs to; 401 problem+json otherwise.
/// Only an app key (`rk_app_…`) passes: an admin key reads no subscriber's offers.
struct AppKeyAuthentication: Sendable {
    let keys: APIKeyStore

    func bundleId(of request: Request, logger: Logger) async throws -> String {
        guard let header = request.headers[.authorization] else {
            throw Problem.unauthorized("send the app key as Authorization: Bearer <key> (from `reclaim apps create-key`)")
        }
        let parts = header.split(separator: " ", maxSplits: 1)
        // Keys are 50-odd characters: refuse anything far longer before hashing it.
        guard parts.count == 2, parts[0].lowercased() == "bearer", parts[1].utf8.count <= 256 else {
            throw Problem.unauthorized("the Authorization header must be Bearer <key>")
        }
        guard let caller = try await keys.authenticate(String(parts[1]), logger: logger), caller.scope == .app, let bundleId = caller.bundleId
        else {
            throw Problem.unauthorized("the key is unknown, revoked, or not an app key")
        }
        return bundleId
    }
}
