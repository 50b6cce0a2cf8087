import Crypto
import Foundation

/// How a grant of either kind (``GrantRequest``, ``ExtensionGrantRequest``) names its subscriber: by the app's user
/// (`appAccountToken`, a UUID) or the subscription (`originalTransactionId`), optionally in one `environment`.
enum GrantSubscriber {
    /// The token parsed; each field checked as both kinds check it.
    static func check(appAccountToken: String?, originalTransactionId: String?, environment: String?) throws(InvalidInput) -> UUID? {
        guard appAccountToken != nil || originalTransactionId != nil else {
            throw InvalidInput("name the subscriber by appAccountToken or originalTransactionId")
        }
        var token: UUID?
        if let text = appAccountToken {
            guard let uuid = UUID(uuidString: text) else { throw InvalidInput("appAccountToken must be a UUID") }
            token = uuid
        }
        if let otid = originalTransactionId, otid.isEmpty || otid.count > 64 {
            throw InvalidInput("originalTransactionId must be 1 to 64 characters")
        }
        if let environment, environment != AppStoreEnvironment.production.rawValue && environment != AppStoreEnvironment.sandbox.rawValue {
            throw InvalidInput("environment must be Production or Sandbox")
        }
        return token
    }

    /// SHA-256 of `fields`, each length-prefixed (absent: `-`) after `version`, in the order given: a grant's
    /// fingerprint, so that the same Idempotency-Key with another request is told apart.
    static func fingerprint(_ version: String, _ fields: [String?]) -> [UInt8] {
        var canonical = version
        for field in fields {
            if let field { canonical += "|\(field.utf8.count):\(field)" } else { canonical += "|-" }
        }
        return Array(SHA256.hash(data: Data(canonical.utf8)))
    }
}
