import Foundation
import Hummingbird
import Logging
import ReclaimStore

/// Reads `Authorization: Bearer <key>` and returns who it belongs to; 401 problem+json otherwise. App keys
/// (`rk_app_…`) reach their own app's subscribers only; admin keys (`rk_admin_…`) reach the admin API only.
struct KeyAuthentication: Sendable {
    let keys: APIKeyStore

    /// The app of an app key.
    func bundleId(of request: Request, logger: Logger) async throws -> String {
        let caller = try await caller(of: request, expecting: "app key (from `reclaim apps create-key`)", logger: logger)
        guard caller.scope == .app, let bundleId = caller.bundleId else { throw Problem.unauthorized("the key is not an app key") }
        return bundleId
    }

    /// The id of an admin key.
    func adminKeyId(of request: Request, logger: Logger) async throws -> UUID {
        let caller = try await caller(of: request, expecting: "admin key (from `reclaim admin create-key`)", logger: logger)
        guard caller.scope == .admin else { throw Problem.unauthorized("the key is not an admin key") }
        return caller.keyId
    }

    private func caller(of request: Request, expecting: String, logger: Logger) async throws -> APIKeyStore.Caller {
        guard let header = request.headers[.authorization] else {
            throw Problem.unauthorized("send the \(expecting) as Authorization: Bearer <key>")
        }
        let parts = header.split(separator: " ", maxSplits: 1)
        // Keys are 50-odd characters: refuse anything far longer before hashing it.
        guard parts.count == 2, parts[0].lowercased() == "bearer", parts[1].utf8.count <= 256 else {
            throw Problem.unauthorized("the Authorization header must be Bearer <key>")
        }
        guard let caller = try await keys.authenticate(String(parts[1]), logger: logger) else {
            throw Problem.unauthorized("the key is unknown or revoked")
        }
        return caller
    }
}
