import Foundation
import ReclaimDomain

extension ReclaimConfig {
    /// One offer signer per app with signing keys, made with the app's first key. Every configured key file is
    /// read and checked here, at start-up: a missing or unreadable `.p8` stops the process with the file and the
    /// reason, instead of failing the first offer hours later. Key material never enters the message.
    public func offerSigners() throws -> [String: OfferSigner] {
        var signers: [String: OfferSigner] = [:]
        var problems: [String] = []
        for app in apps {
            var keys: [SigningKey] = []
            for file in app.signingKeys {
                guard let contents = FileManager.default.contents(atPath: file.file) else {
                    problems.append("app \(app.bundleId): signing key \(file.keyId): cannot read \(file.file)")
                    continue
                }
                do {
                    keys.append(
                        try SigningKey.load(keyId: file.keyId, contents: contents, source: file.file, origin: file.xcode ? .xcode : .appStoreConnect)
                    )
                } catch {
                    problems.append("app \(app.bundleId): signing key \(file.keyId): \(error)")
                }
            }
            if let first = keys.first { signers[app.bundleId] = OfferSigner(key: first, bundleId: app.bundleId, issuerId: app.issuerId) }
        }
        if !problems.isEmpty { throw ConfigError("signing keys:\n" + problems.map { "  - \($0)" }.joined(separator: "\n")) }
        return signers
    }
}

extension ReclaimConfig {
    /// The user-token verifiers of the apps that require user tokens, by bundle id. Each secret file is read at
    /// start-up and must hold at least 32 bytes (surrounding whitespace ignored); the secret never enters a message.
    public func userTokenVerifiers() throws -> [String: UserTokenVerifier] {
        var verifiers: [String: UserTokenVerifier] = [:]
        var problems: [String] = []
        /// The secret in `file`, or nil with a problem recorded.
        func secret(_ file: String, key: String, app: String) -> Data? {
            guard let contents = FileManager.default.contents(atPath: file) else {
                problems.append("app \(app): \(key): cannot read \(file)")
                return nil
            }
            let secret = Data(String(decoding: contents, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines).utf8)
            guard secret.count >= 32 else {
                problems.append("app \(app): \(key): \(file) holds \(secret.count) bytes; use 32 or more (e.g. openssl rand -hex 32)")
                return nil
            }
            return secret
        }
        for app in apps {
            guard let file = app.userTokenSecretFile else {
                if app.previousUserTokenSecretFile != nil {
                    problems.append("app \(app.bundleId): previousUserTokenSecretFile needs userTokenSecretFile (the new secret)")
                }
                continue
            }
            guard let current = secret(file, key: "userTokenSecretFile", app: app.bundleId) else { continue }
            var previous: Data?
            if let previousFile = app.previousUserTokenSecretFile {
                guard let read = secret(previousFile, key: "previousUserTokenSecretFile", app: app.bundleId) else { continue }
                previous = read
            }
            verifiers[app.bundleId] = UserTokenVerifier(secret: current, previousSecret: previous)
        }
        if !problems.isEmpty { throw ConfigError("user token secrets:\n" + problems.map { "  - \($0)" }.joined(separator: "\n")) }
        return verifiers
    }
}
