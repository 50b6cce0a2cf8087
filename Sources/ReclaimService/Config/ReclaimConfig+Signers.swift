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
                    keys.append(try SigningKey.load(keyId: file.keyId, contents: contents, source: file.file))
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
