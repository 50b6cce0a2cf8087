import Foundation
import Logging
import ReclaimStore

/// API keys for tests: ``APIKeyStore``'s statements, each on a connection of its own.
struct TestKeys {
    let client: Database

    func create(scope: APIKeyStore.Scope, bundleId: String?, name: String? = nil, logger: Logger) async throws -> String {
        try await client.withConnection(logger: logger) {
            try await APIKeyStore.create(scope: scope, bundleId: bundleId, name: name, connection: $0, logger: logger)
        }
    }

    func list(bundleId: String?, logger: Logger) async throws -> [APIKeyRecord] {
        try await client.withConnection(logger: logger) { try await APIKeyStore.list(bundleId: bundleId, connection: $0, logger: logger) }
    }

    func revoke(id: UUID, logger: Logger) async throws -> Bool {
        try await client.withConnection(logger: logger) { try await APIKeyStore.revoke(id: id, connection: $0, logger: logger) }
    }
}
